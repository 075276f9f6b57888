// What the page keeps in this browser's localStorage, under "minitriton:": each exercise's code (with the
// version of the starter it grew from), which exercises are solved, how many hints are shown, the language
// and the pane sizes. Storage that is full or blocked never stops the page: reads give defaults, writes are
// dropped.
const PREFIX = "minitriton:";

function read(key, fallback = null) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw == null ? fallback : JSON.parse(raw);
  } catch { return fallback; }
}
function write(key, value) {
  try { localStorage.setItem(PREFIX + key, JSON.stringify(value)); } catch { /* full or blocked */ }
}

export function getPref(name, fallback = null) { return read("pref:" + name, fallback); }
export function setPref(name, value) { write("pref:" + name, value); }

// The language was stored as a bare string before the prefs had their own keys.
export function getLang() {
  try { return getPref("lang") ?? localStorage.getItem(PREFIX + "lang"); } catch { return null; }
}

// {code, starterHash, saved} or null. `starterHash` names the starter in every language at once
// (the bridge's starter_hash), so switching the page's language never looks like a new starter.
export function loadCode(id) {
  const saved = read("code:" + id);
  return saved && typeof saved.code === "string" ? saved : null;
}
export function saveCode(id, code, starterHash) {
  write("code:" + id, { code, starterHash: starterHash ?? null, saved: Date.now() });
}

// Whether saved code grew from an older starter than the one the exercise has now.
export function starterChanged(saved, ex) {
  return !!(saved && saved.starterHash && ex.starter_hash && saved.starterHash !== ex.starter_hash);
}

export function solvedIds() { return new Set(Object.keys(read("solved", {}) || {})); }
export function markSolved(id) {
  const all = read("solved", {}) || {};
  if (!all[id]) { all[id] = Date.now(); write("solved", all); }
}

export function hintsShown(id) { return Number(read("hints:" + id, 0)) || 0; }
export function setHintsShown(id, k) { write("hints:" + id, k); }

export function getCurrent() { return read("current"); }
export function setCurrent(id) { write("current", id); }

// Code, solved marks and shown hints of every exercise (the language and pane sizes stay).
export function eraseAll() {
  try {
    for (const k of Object.keys(localStorage)) {
      if (/^minitriton:(code:|hints:|solved$|current$)/.test(k)) localStorage.removeItem(k);
    }
  } catch { /* blocked */ }
}
