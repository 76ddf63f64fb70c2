// Versions of an audience as the builder's history shows them: each version as lines of text
// (its name, its mode, then its filter in the library's text syntax, one top-level AND/OR
// part a line), and the difference between two versions line by line, so a change of one
// condition reads as one line taken out and one put in.

const JOINERS = /^ (AND|OR|and|or) /;

export function textLines(text) {
  // The filter text cut before each AND or OR outside quotes, parentheses and brackets.
  if (!text) return [];
  const lines = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "(" || c === "[") depth += 1;
    else if (c === ")" || c === "]") depth -= 1;
    else if (c === " " && depth === 0 && JOINERS.test(text.slice(i))) {
      lines.push(text.slice(start, i));
      start = i + 1;
    }
  }
  lines.push(text.slice(start));
  return lines;
}

export function versionLines(version) {
  // What a version says, as the lines its difference with another is made of.
  const filter = textLines(version.filtersText);
  return [
    `name: ${version.name}`,
    `mode: ${version.mode}`,
    ...(filter.length ? filter : ["(no filter)"]),
  ];
}

export function lineDiff(before, after) {
  // The lines of `before` and `after` in order, each marked " " (in both), "-" (only before)
  // or "+" (only after): a longest common subsequence, which keeps unchanged lines together.
  const n = before.length;
  const m = after.length;
  const common = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      common[i][j] =
        before[i] === after[j]
          ? common[i + 1][j + 1] + 1
          : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push({ mark: " ", line: before[i] });
      i += 1;
      j += 1;
    } else if (i < n && (j === m || common[i + 1][j] >= common[i][j + 1])) {
      out.push({ mark: "-", line: before[i] }); // what went out reads before what came in
      i += 1;
    } else {
      out.push({ mark: "+", line: after[j] });
      j += 1;
    }
  }
  return out;
}

export function versionLabel(version) {
  // "v3 · 2031-06-01 08:20 · key_… (restores v1)": one version in the history list.
  const when = String(version.createdAt || "").replace("T", " ").slice(0, 16);
  const who = version.keyLabel || version.keyId || "key not recorded";
  const restored = version.restoredFrom ? ` (restores v${version.restoredFrom})` : "";
  const current = version.current ? " · current" : "";
  return `v${version.number} · ${when} · ${who}${restored}${current}`;
}
