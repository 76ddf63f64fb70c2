// The preview table's columns (columns.js): the fields the rules read, in order, once each; a
// custom field and a path read from `data`; the name when no field is read.

import assert from "node:assert/strict";
import { test } from "node:test";

import { columnsOf, shownValue } from "../../../src/audiencefilter/service/static/builder/columns.js";
import { behaviour, group, rule } from "../../../src/audiencefilter/service/static/builder/model.js";

const FIELDS = new Map(
  [
    { key: "points", type: "number", label: "Points", custom: false },
    { key: "country", type: "string", label: "Country", custom: false },
    { key: "birthday", type: "date", label: "Date of birth", custom: true },
    { key: "data", type: "json", label: "Custom data", custom: false },
  ].map((f) => [f.key, f]),
);

test("the fields the rules read, once each, in order", () => {
  const plan = rule("data", "equals", "pro", { keys: ["plan"] });
  const tree = group("AND", [
    rule("country", "equals", "FR"),
    group("OR", [rule("points", "gte", "1"), rule("country", "equals", "DE")]),
    behaviour({ name: "share" }),
    rule("birthday", "anniversary"),
    plan,
  ]);
  const columns = columnsOf(tree, FIELDS);
  assert.deepEqual(
    columns.map((c) => c.label),
    ["Country", "Points", "Date of birth", "Custom data › plan"],
  );
  const contact = { country: "FR", points: 3, data: { birthday: "1990-05-01", plan: "pro" } };
  assert.deepEqual(columns.map((c) => shownValue(c.read(contact))), ["FR", "3", "1990-05-01", "pro"]);
  assert.equal(shownValue(columns[3].read({ data: null })), "");
});

test("the name when the rules read no field of the contact", () => {
  const columns = columnsOf(group("AND", [behaviour({ name: "share" })]), FIELDS);
  assert.deepEqual(columns.map((c) => c.label), ["Name"]);
  assert.equal(columns[0].read({ firstName: "Ann", lastName: null }), "Ann");
  assert.equal(shownValue(["a", "b"]), "a, b");
});
