// window.__sandbox: read-only views of the page's state for the e2e tests and for people debugging in the
// console, and the one way the tests draw the memory picture's rarer cases (showMemory).
export function testHandle({ state, editor, panes, memoryPanel, viewFor, t0, mode }) {
  return {
    state, get code() { return editor.code; }, setCode: (s) => editor.setCode(s), get mode() { return mode(); },
    // The caret's line number, the text before it on its line and the completion's status (the typing tests read
    // the indentation Enter gave, and press Enter once the popup a student would see is there).
    get caret() {
      const s = editor.view.state, at = s.selection.main.head, line = s.doc.lineAt(at);
      return { line: line.number, before: line.text.slice(0, at - line.from), completion: editor.completion };
    },
    get timings() { return { ...state.timings, now: Math.round(performance.now() - t0) }; }, panes,
    memoryCell: (name, offset) => memoryPanel.cellAt(name, offset),
    // Shows a memory-op answer as if the bridge had sent it.
    showMemory(data, launch = 0) {
      const v = viewFor(state.current.id);
      v.memory = { data, launch, program: 0, step: -1 };
      memoryPanel.render(v);
    },
  };
}
