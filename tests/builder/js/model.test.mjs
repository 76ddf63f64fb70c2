// The builder page's model (model.js) against the library's answers: tests/builder/page_cases.py
// writes them (the conformance cases' canonical where clauses, the field catalogue of their
// schemas, and a catalogue holding a field of every type) to the JSON file named by
// AUDIENCEFILTER_PAGE_CASES; tests/builder/test_page_modules.py runs `node --test` on this.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  findNode,
  fromWhere,
  group,
  operatorsFor,
  problems,
  rule,
  toWhere,
} from "../../../src/audiencefilter/service/static/builder/model.js";

const answers = JSON.parse(readFileSync(process.env.AUDIENCEFILTER_PAGE_CASES, "utf8"));

// Each case names its schema's catalogue, kept once in `answers.catalogues`.
for (const kase of [...answers.cases, ...answers.controlled]) {
  kase.catalogue = answers.catalogues[kase.catalogue];
}

function fieldsOf(catalogue) {
  return new Map(catalogue.fields.map((f) => [f.key, f]));
}

function kinds(node, seen = new Map()) {
  seen.set(node.kind, (seen.get(node.kind) || 0) + 1);
  if (node.kind === "group") for (const child of node.children) kinds(child, seen);
  return seen;
}

test("there are cases to check", () => {
  assert.ok(answers.cases.length > 400, `only ${answers.cases.length} cases`);
});

test("reading then writing every conformance filter gives the library's canonical JSON", () => {
  const failures = [];
  for (const { name, catalogue, canonical } of answers.cases) {
    const fields = fieldsOf(catalogue);
    const { where } = toWhere(fromWhere(canonical, fields), fields);
    try {
      assert.deepStrictEqual(where === null ? {} : where, canonical);
    } catch {
      failures.push(`${name}: ${JSON.stringify(canonical)} came back as ${JSON.stringify(where)}`);
    }
  }
  assert.deepEqual(failures, []);
});

test("the builder has controls for most conformance filters, not only the text box", () => {
  // A filter the builder cannot show is kept as a "raw" node; the figure is printed, and
  // must not fall.
  let covered = 0;
  for (const { catalogue, canonical } of answers.cases) {
    const tree = fromWhere(canonical, fieldsOf(catalogue));
    if (!kinds(tree).has("raw")) covered += 1;
  }
  const share = covered / answers.cases.length;
  console.log(`# builder controls cover ${covered} of ${answers.cases.length} filters`);
  assert.ok(share >= 0.8, `only ${covered} of ${answers.cases.length}`);
});

test("every field offers exactly the operators the library takes for it", () => {
  for (const field of answers.everyType.fields) {
    const offered = new Set(
      operatorsFor(field)
        .map((o) => o.key)
        .filter((key) => key !== null),
    );
    assert.deepEqual([...offered].sort(), [...field.operators].sort(), `${field.key} (${field.type})`);
  }
});

test("the null tests are offered for every field", () => {
  for (const field of answers.everyType.fields) {
    const ops = operatorsFor(field).map((o) => o.op);
    assert.ok(ops.includes("null") && ops.includes("notnull"), field.key);
  }
});

test("every path the writer reports names a node of the tree", () => {
  for (const { catalogue, canonical } of answers.cases) {
    const fields = fieldsOf(catalogue);
    const tree = fromWhere(canonical, fields);
    const { paths } = toWhere(tree, fields);
    for (const id of paths.values()) assert.ok(findNode(tree, id), id);
  }
});

test("field references, start of, aggregates, every and increase have controls", () => {
  for (const { name, catalogue, canonical } of answers.controlled) {
    const fields = fieldsOf(catalogue);
    const tree = fromWhere(canonical, fields);
    assert.ok(!kinds(tree).has("raw"), `${name} is kept as JSON: ${JSON.stringify(canonical)}`);
    assert.deepStrictEqual(toWhere(tree, fields).where, canonical, name);
  }
});

test("the page's own checks never stop a filter the library accepts", () => {
  for (const { name, catalogue, canonical } of answers.cases) {
    const fields = fieldsOf(catalogue);
    const found = problems(fromWhere(canonical, fields), fields, new Set(catalogue.timeZones));
    assert.deepEqual([...found.values()], [], name);
  }
});

test("the page's own checks catch a word in a number, an unknown zone, an empty number", () => {
  const catalogue = answers.controlled[0].catalogue;
  const fields = fieldsOf(catalogue);
  const zones = new Set(catalogue.timeZones);
  const points = rule("points", "gte", "lots");
  const empty = rule("points", "gte", "");
  const within = rule("createdAt", "within", "", {
    period: { dir: "this", n: "1", unit: "day", zone: "Europe/Pariss" },
  });
  const fine = rule("createdAt", "within", "", {
    period: { dir: "this", n: "1", unit: "day", zone: "America/New_York" },
  });
  const tree = group("AND", [points, empty, within, fine]);
  const found = problems(tree, fields, zones);
  assert.match(found.get(points.id)[0], /expected a number, found “lots”/);
  assert.match(found.get(empty.id)[0], /enter a number/);
  assert.match(found.get(within.id)[0], /unknown time zone “Europe\/Pariss”/);
  assert.equal(found.has(fine.id), false);
});
