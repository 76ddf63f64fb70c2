// What the page can tell is unfinished in the text box before asking the service: a quoted
// value or a bracket left open, or a filter ending on an operator or a connective
// (`points >=`, `country = "FR" and`). Half-typed text is the common case while typing, and
// sending it would only earn a 400 per pause; the page says what is missing, in place, and
// asks nothing. Anything else, right or wrong, is the library's to judge (a unit test checks
// that no filter the library accepts is ever stopped here).

const OPENERS = { "(": ")", "[": "]" };
const TRAILING_WORDS = new Set([
  "and", "or", "not", "in", "is", "with", "within", "has", "contains", "where", "anniversary",
]);
const TRAILING_SYMBOL = /(==|!=|<=|>=|=|<|>|,|\(|\[)$/;

function scan(text) {
  // The text without comments, and what is left open at its end (a quote, brackets).
  let quote = null;
  let comment = false;
  const open = [];
  let kept = "";
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (comment) {
      if (char === "\n") comment = false;
      continue;
    }
    if (quote) {
      if (char === "\\" && quote !== "`") {
        kept += char + (text[i + 1] || "");
        i += 1;
        continue;
      }
      if (char === quote) quote = null;
      kept += char;
      continue;
    }
    if (char === "#") {
      comment = true;
      continue;
    }
    if (char === '"' || char === "'" || char === "`") quote = char;
    else if (char in OPENERS) open.push(OPENERS[char]);
    else if ((char === ")" || char === "]") && open[open.length - 1] === char) open.pop();
    kept += char;
  }
  return { quote, open, kept: kept.trimEnd() };
}

export function unfinished(text) {
  // Why the text cannot be a whole filter yet, or null when the library should judge it.
  if (!text.trim()) return null;
  const { quote, open, kept } = scan(text);
  if (quote) return `a ${quote === "`" ? "field name" : "quoted value"} is not closed: add ${quote}`;
  if (open.length) return `a bracket is not closed: add ${open.reverse().join("")}`;
  const symbol = TRAILING_SYMBOL.exec(kept);
  if (symbol) return `something is missing after “${symbol[1]}”`;
  const word = /(?:^|[\s)\]])([A-Za-z]+)$/.exec(kept);
  if (word && TRAILING_WORDS.has(word[1].toLowerCase())) {
    return `something is missing after “${word[1]}”`;
  }
  return null;
}

export function caretLine(text, line, column) {
  // The line of `text` a problem is on, and a caret under its column, for the message shown
  // in place under the text box.
  const lines = text.split("\n");
  const shown = lines[line - 1];
  if (shown === undefined || !column) return "";
  return `${shown}\n${" ".repeat(Math.max(0, column - 1))}^`;
}
