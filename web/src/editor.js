// The code editor: CodeMirror 6 with Python, 4-space indentation (Tab indents, Enter after ":" indents one
// level, as Python expects), completion accepted with Tab (Enter always breaks the line; no option equal to the
// word already typed is offered), Ctrl/Cmd+Enter to run, Shift+Ctrl/Cmd+Enter to check, the line of the last error
// highlighted (its failing span underlined) and a suggested fix made as one change. Tab stays in the editor;
// Esc then Tab moves the focus on (CodeMirror's own escape).
import { EditorView, basicSetup } from "codemirror";
import { acceptCompletion, autocompletion, completionKeymap, completionStatus } from "@codemirror/autocomplete";
import { globalCompletion, localCompletionSource, pythonLanguage } from "@codemirror/lang-python";
import { indentWithTab } from "@codemirror/commands";
import { LanguageSupport, delimitedIndent, indentNodeProp, indentUnit } from "@codemirror/language";
import { Compartment, EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import { Decoration, keymap } from "@codemirror/view";

const setErrorLine = StateEffect.define();   // {pos, span: [from, to] | null} or null
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setErrorLine)) {
        const marks = e.value == null ? [] : [Decoration.line({ class: "cm-error-line" }).range(e.value.pos)];
        if (e.value?.span) marks.push(Decoration.mark({ class: "cm-error-span" }).range(...e.value.span));
        deco = Decoration.set(marks, true);
      }
    }
    if (tr.docChanged && !tr.effects.some((e) => e.is(setErrorLine))) deco = Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

// The column after an opening bracket that has items on its own line (PEP 8's visual indent), else null.
function alignedAfterBracket(cx) {
  const node = cx.node, open = node.childAfter(node.from), last = node.lastChild;
  if (!open) return null;
  const line = cx.state.doc.lineAt(open.from), sim = cx.options.simulateBreak;
  const end = sim == null || sim <= line.from ? line.to : Math.min(line.to, sim);
  for (let pos = open.to; ;) {
    const next = node.childAfter(pos);
    if (!next || next === last) return null;
    if (!next.type.isSkipped) {
      if (next.from >= end) return null;
      return cx.column(open.to + /^ */.exec(line.text.slice(open.to - line.from))[0].length);
    }
    pos = next.to;
  }
}

// Bracket indentation as Python writes it: a continuation line aligns with the first item after the bracket,
// also when the line starts with the closer (the one closeBrackets typed, which Enter carries down) -- CodeMirror
// would put it under the bracket, one column left of the items; a bracket that ends its line indents one level.
function bracketIndent(closing) {
  const hanging = delimitedIndent({ closing, align: false });
  return (cx) => alignedAfterBracket(cx) ?? hanging(cx);
}

const python = () => new LanguageSupport(pythonLanguage.configure({ props: [indentNodeProp.add({
  "TupleExpression ComprehensionExpression ParamList ArgList ParenthesizedExpression": bracketIndent(")"),
  "DictionaryExpression DictionaryComprehensionExpression SetExpression SetComprehensionExpression": bracketIndent("}"),
  "ArrayExpression ArrayComprehensionExpression": bracketIndent("]"),
})] }));

// Python's completion sources without the options that equal the word already typed: a popup offering "mask"
// after "mask" has nothing to add. Asked again at every keystroke (no validFor), so the word compared is the
// one typed so far.
function withoutTypedWord(source) {
  return async (context) => {
    const result = await source(context);
    if (!result) return null;
    const typed = context.state.sliceDoc(result.from, context.pos);
    const options = result.options.filter((o) => o.label !== typed);
    return options.length ? { ...result, options, validFor: undefined } : null;
  };
}

// Completion keys: CodeMirror's own, except that Tab accepts (Enter stays a line break, whatever is open).
const completion = [
  autocompletion({ defaultKeymap: false, override: [localCompletionSource, globalCompletion].map(withoutTypedWord) }),
  Prec.highest(keymap.of([
    ...completionKeymap.filter((b) => b.key !== "Enter"),
    { key: "Tab", run: acceptCompletion },
  ])),
];

const errorTheme = EditorView.baseTheme({
  ".cm-error-span": { textDecoration: "underline wavy #c0392b", textUnderlineOffset: "3px" },
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
        basicSetup, completion, python(), indentUnit.of("    "), EditorState.tabSize.of(4), keymap.of([indentWithTab]),
        errorLineField, errorTheme,
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(); }),
        attributes.of(EditorView.contentAttributes.of({ "aria-label": label })),
      ],
    }),
  });
  return {
    view,
    get code() { return view.state.doc.toString(); },
    get completion() { return completionStatus(view.state); },   // "active" (a popup), "pending" or null
    setCode(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setLabel(text) {
      view.dispatch({ effects: attributes.reconfigure(EditorView.contentAttributes.of({ "aria-label": text })) });
    },
    // The error's line highlighted and, when the error's record gives the failing span on that line (its col
    // and end_col), the span marked in it.
    showErrorLine(line, record = null) {
      if (!line || line < 1 || line > view.state.doc.lines) { view.dispatch({ effects: setErrorLine.of(null) }); return; }
      const { from, length } = view.state.doc.line(line);
      const spans = record?.line === line && Number.isInteger(record.col) && Number.isInteger(record.end_col)
        && record.col < record.end_col && record.end_col <= length;
      const span = spans ? [from + record.col, from + record.end_col] : null;
      view.dispatch({ effects: setErrorLine.of({ pos: from, span }), selection: { anchor: from } });
      // centred in the editor's own scroller only (CodeMirror's scrollIntoView would move the page too, away
      // from the result that a run brings into view on a phone)
      const block = view.lineBlockAt(from), scroller = view.scrollDOM;
      scroller.scrollTop = Math.max(0, block.top + block.height / 2 - scroller.clientHeight / 2);
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
