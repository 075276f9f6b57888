// The code editor: CodeMirror 6 with Python, 4-space indentation (Tab indents, Enter after ":" indents one
// level, as Python expects), Ctrl/Cmd+Enter to run, Shift+Ctrl/Cmd+Enter to check, and the line of the last
// error highlighted. Tab stays in the editor; Esc then Tab moves the focus on (CodeMirror's own escape).
import { EditorView, basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { Compartment, EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import { Decoration, keymap } from "@codemirror/view";

const setErrorLine = StateEffect.define();
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setErrorLine)) {
        deco = e.value == null ? Decoration.none
          : Decoration.set([Decoration.line({ class: "cm-error-line" }).range(e.value)]);
      }
    }
    if (tr.docChanged && !tr.effects.some((e) => e.is(setErrorLine))) deco = Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export function createEditor(parent, { onRun, onCheck, onChange, label }) {
  const attributes = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: "",
      extensions: [
        Prec.highest(keymap.of([
          { key: "Mod-Enter", run: () => { onRun(); return true; } },
          { key: "Shift-Mod-Enter", run: () => { onCheck(); return true; } },
        ])),
        basicSetup, python(), indentUnit.of("    "), EditorState.tabSize.of(4), keymap.of([indentWithTab]),
        errorLineField,
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(); }),
        attributes.of(EditorView.contentAttributes.of({ "aria-label": label })),
      ],
    }),
  });
  return {
    view,
    get code() { return view.state.doc.toString(); },
    setCode(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setLabel(text) {
      view.dispatch({ effects: attributes.reconfigure(EditorView.contentAttributes.of({ "aria-label": text })) });
    },
    showErrorLine(line) {
      if (!line || line < 1 || line > view.state.doc.lines) { view.dispatch({ effects: setErrorLine.of(null) }); return; }
      const pos = view.state.doc.line(line).from;
      view.dispatch({ effects: [setErrorLine.of(pos), EditorView.scrollIntoView(pos, { y: "center" })], selection: { anchor: pos } });
    },
    // A suggested fix {line, col, end_line, end_col, text} (lines 1-based, columns 0-based) as one change;
    // false when it does not fit the text.
    applyEdit(edit) {
      const doc = view.state.doc;
      if (edit.line < 1 || edit.end_line < edit.line || edit.end_line > doc.lines) return false;
      const first = doc.line(edit.line), last = doc.line(edit.end_line);
      if (edit.col > first.length || edit.end_col > last.length) return false;
      view.dispatch({ changes: { from: first.from + edit.col, to: last.from + edit.end_col, insert: edit.text },
        scrollIntoView: true });
      return true;
    },
    focus() { view.focus(); },
  };
}
