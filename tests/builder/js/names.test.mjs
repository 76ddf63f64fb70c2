// The builder's text box names audiences by name (names.js): an audience condition's id is
// written by the audience's name when the list has one audience of that name.

import assert from "node:assert/strict";
import { test } from "node:test";

import { namedText, uniqueNames } from "../../../src/audiencefilter/service/static/builder/names.js";

const VIP = "aud_00000000000000000001";
const TWIN_A = "aud_00000000000000000002";
const TWIN_B = "aud_00000000000000000003";
const ALL = "aud_00000000000000000004";
const AUDIENCES = [
  { id: VIP, name: "VIP" },
  { id: TWIN_A, name: "Twin" },
  { id: TWIN_B, name: "Twin" },
  { id: ALL, name: 'All "quoted"' },
];

test("an audience's id is written by its name", () => {
  assert.equal(
    namedText(`audiences some (id = "${VIP}") and points >= 3`, AUDIENCES),
    'audiences some (name = "VIP") and points >= 3',
  );
  assert.equal(
    namedText(`audiences none (id in ["${VIP}", "${ALL}"])`, AUDIENCES),
    'audiences none (name in ["VIP", "All \\"quoted\\""])',
  );
});

test("a shared name, an unknown id and an id inside a text stay as they are", () => {
  const shared = `audiences some (id = "${TWIN_A}") or audiences some (id = "aud_ffffffffffffffffffff")`;
  assert.equal(namedText(shared, AUDIENCES), shared);
  const mixed = `audiences every (id in ["${VIP}", "${TWIN_B}"])`;
  assert.equal(namedText(mixed, AUDIENCES), mixed);
  const quoted = `firstName = "(id = \\"${VIP}\\")"`;
  assert.equal(namedText(quoted, AUDIENCES), quoted);
  assert.equal(namedText("points >= 3", AUDIENCES), "points >= 3");
  assert.equal(namedText(null, AUDIENCES), null);
});

test("only the names one audience has are names", () => {
  assert.deepEqual([...uniqueNames(AUDIENCES).keys()], [VIP, ALL]);
});
