// The text box's own checks (text_checks.js): half-typed text is caught in the page, and no
// filter the library accepts is ever stopped (every conformance case's text, as the library
// writes it, from AUDIENCEFILTER_PAGE_CASES).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { caretLine, unfinished } from "../../../src/audiencefilter/service/static/builder/text_checks.js";

const answers = JSON.parse(readFileSync(process.env.AUDIENCEFILTER_PAGE_CASES, "utf8"));

test("no filter the library accepts is called unfinished", () => {
  assert.ok(answers.cases.length > 400);
  for (const { name, text } of answers.cases) {
    assert.equal(unfinished(text), null, `${name}: ${text}`);
    assert.equal(unfinished(`# a comment\n${text}  `), null, `${name} after a comment`);
  }
});

test("half-typed text is said, not sent", () => {
  const cases = {
    "points >": "something is missing after “>”",
    "points >= 1000 and": "something is missing after “and”",
    "points >= 1000 AND not": "something is missing after “not”",
    'country = "F': 'a quoted value is not closed: add "',
    "country in [\"FR\", ": "a bracket is not closed: add ]",
    "(points > 1 or (x = 2)": "a bracket is not closed: add )",
    "`first name": "a field name is not closed: add `",
    "tags has": "something is missing after “has”",
  };
  for (const [text, why] of Object.entries(cases)) assert.equal(unfinished(text), why, text);
  assert.equal(unfinished('note = "a # b" # and'), null);
  assert.equal(unfinished(""), null);
});

test("a problem's line, with a caret under its column", () => {
  assert.equal(caretLine("points >= 1\nand x >= lots", 2, 10), "and x >= lots\n         ^");
  assert.equal(caretLine("x", 3, 1), "");
});
