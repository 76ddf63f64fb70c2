// The builder's warnings while editing (analysis.js `warningsOf`), from compare answers: "can
// never match" names the conditions to blame and says nothing else; "the same as" and
// "contained in" name the other audience, with the example contacts of the regions that
// prove it; an overlap, an undecided relation and a comparison with itself are no warnings.

import assert from "node:assert/strict";
import { test } from "node:test";

import { warningsOf } from "../../../src/audiencefilter/service/static/builder/analysis.js";

const CAN = { holds: true, reason: "the witness is in the audience", witness: { points: 1 } };
const big = { id: "aud_big", name: "Big spenders" };

function answer(relation, witnesses = {}, a = CAN) {
  const regions = { both: null, aOnly: null, bOnly: null, ...witnesses };
  return { relation, reason: "decided", witnesses: regions, canMatch: { a, b: CAN } };
}

test("can never match names the conditions and says nothing else", () => {
  const never = {
    holds: false,
    reason: "proved: no record can match (points lt 100; points gt 5000)",
    witness: null,
  };
  const found = warningsOf([{ other: big, answer: answer("equivalent", {}, never) }]);
  assert.equal(found.length, 1);
  assert.equal(found[0].kind, "never");
  assert.match(found[0].text, /^Can never match: .*points lt 100; points gt 5000\.$/);
  const alone = warningsOf([{ other: null, answer: answer("equivalent", {}, never) }]);
  assert.deepEqual(alone.map((w) => w.kind), ["never"]);
});

test("the same as and contained in name the audience, with the examples that prove it", () => {
  const same = warningsOf([{ other: big, answer: answer("equivalent", { both: { points: 1000 } }) }]);
  assert.equal(same[0].kind, "same");
  assert.match(same[0].text, /^The same as “Big spenders”/);
  assert.deepEqual(same[0].examples, [["In both", { points: 1000 }]]);
  const within = warningsOf([
    { other: big, answer: answer("subset", { both: { points: 5000 }, bOnly: { points: 1000 } }) },
  ]);
  assert.equal(within[0].kind, "within");
  assert.deepEqual(within[0].examples, [
    ["In both", { points: 5000 }],
    ["Only in “Big spenders”", { points: 1000 }],
  ]);
});

test("an overlap, an undecided relation or the filter against itself warns of nothing", () => {
  for (const relation of ["overlap", "superset", "disjoint", "unknown"]) {
    assert.deepEqual(warningsOf([{ other: big, answer: answer(relation) }]), []);
  }
  assert.deepEqual(warningsOf([{ other: null, answer: answer("equivalent") }]), []);
  assert.deepEqual(warningsOf([]), []);
});
