// The builder page's model (model.js) against the library's answers: tests/builder/page_cases.py
// writes them (the conformance cases' canonical where clauses, the field catalogue of their
// schemas, and a catalogue holding a field of every type) to the JSON file named by
// AUDIENCEFILTER_PAGE_CASES; tests/builder/test_page_modules.py runs `node --test` on this.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  behaviour,
  findNode,
  fromWhere,
  group,
  hasRaw,
  measureFor,
  operatorsFor,
  problems,
  relationsOf,
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

// Reading and writing with a catalogue's fields and relations, as the page does.
const read = (where, catalogue) => fromWhere(where, fieldsOf(catalogue), relationsOf(catalogue));
const written = (tree, catalogue) => toWhere(tree, fieldsOf(catalogue), relationsOf(catalogue));

test("there are cases to check", () => {
  assert.ok(answers.cases.length > 400, `only ${answers.cases.length} cases`);
});

test("reading then writing every conformance filter gives the library's canonical JSON", () => {
  const failures = [];
  for (const { name, catalogue, canonical } of answers.cases) {
    const { where } = written(read(canonical, catalogue), catalogue);
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
    if (!hasRaw(read(canonical, catalogue))) covered += 1;
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
    const tree = read(canonical, catalogue);
    const { paths } = written(tree, catalogue);
    for (const id of paths.values()) assert.ok(findNode(tree, id), id);
  }
});

test("field references, start of, aggregates, every and increase have controls", () => {
  for (const { name, catalogue, canonical } of answers.controlled) {
    const tree = read(canonical, catalogue);
    assert.ok(!hasRaw(tree), `${name} is kept as JSON: ${JSON.stringify(canonical)}`);
    assert.deepStrictEqual(written(tree, catalogue).where, canonical, name);
  }
});

test("the page's own checks never stop a filter the library accepts", () => {
  for (const { name, catalogue, canonical } of answers.cases) {
    const zones = new Set(catalogue.timeZones);
    const found = problems(read(canonical, catalogue), fieldsOf(catalogue), zones, relationsOf(catalogue));
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

// ---- actions with other conditions, aggregates of createdAt, data keys holding a dot --------

function families(canonical) {
  // Whether a filter belongs to the families the builder once kept as JSON: a relation (its
  // where clause, a count or an aggregate) or a data path.
  const text = JSON.stringify(canonical);
  return text.includes('"actions":') || text.includes('"path":');
}

test("every conformance filter over actions or a data path reads into controls, not JSON", () => {
  const cases = answers.cases.filter(({ canonical }) => families(canonical));
  assert.ok(cases.length > 60, `only ${cases.length} cases`);
  const kept = [];
  for (const { name, catalogue, canonical } of cases) {
    const tree = read(canonical, catalogue);
    if (hasRaw(tree)) kept.push(`${name}: ${JSON.stringify(canonical)}`);
    assert.deepStrictEqual(written(tree, catalogue).where, canonical, name);
  }
  assert.deepEqual(kept, []);
});

const service = () => answers.controlled[0].catalogue;
const behaviourOf = (tree) => (tree.kind === "behaviour" ? tree : tree.children[0]);
const alone = (node) => group("AND", [node], false, "object");

test("several conditions on the actions are rules inside the behaviour", () => {
  const canonical = {
    actions: {
      some: {
        name: { equals: "purchase" },
        increase: { gt: 10 },
        createdAt: { within: { last: 30, unit: "day" } },
      },
    },
  };
  const tree = read(canonical, service());
  const node = behaviourOf(tree);
  assert.equal(node.kind, "behaviour");
  assert.equal(node.name, "purchase");
  assert.equal(node.increased, true);
  // `within` has no quick control: it is a rule over the actions' createdAt.
  const [within] = node.more.children;
  assert.deepEqual([within.field, within.op, within.period.n], ["createdAt", "within", "30"]);
  assert.deepStrictEqual(written(tree, service()).where, canonical);
});

test("an OR inside the actions' filter is a group of the behaviour", () => {
  const canonical = {
    actions: { none: { OR: [{ name: { equals: "share" } }, { name: { equals: "buy" } }] } },
  };
  const tree = read(canonical, service());
  const node = behaviourOf(tree);
  assert.equal(node.more.combinator, "OR");
  assert.deepEqual(
    node.more.children.map((r) => r.value),
    ["share", "buy"],
  );
  assert.deepStrictEqual(written(tree, service()).where, canonical);
});

test("built by hand: a behaviour with other conditions writes one where object", () => {
  const node = behaviour({ quantifier: "some", name: "purchase" });
  node.more = group("AND", [
    rule("increase", "gt", "10"),
    rule("createdAt", "within", "", { period: { dir: "last", n: "30", unit: "day", zone: "" } }),
  ], false, "object");
  const where = written(alone(node), service()).where;
  assert.deepStrictEqual(where, {
    actions: {
      some: {
        name: { equals: "purchase" },
        increase: { gt: 10 },
        createdAt: { within: { last: 30, unit: "day" } },
      },
    },
  });
});

test("the largest createdAt is a date-time rule: relative, a period, null", () => {
  const cat = service();
  const relation = relationsOf(cat).get("actions");
  const node = behaviour({ quantifier: "max" });
  node.measure = measureFor(node, relation);
  node.measure.field = "createdAt";
  node.measure.op = "gte";
  node.measure.value = "30 days ago";
  assert.deepStrictEqual(written(alone(node), cat).where, {
    actions: { max: { createdAt: { gte: { ago: "P30D" } } } },
  });
  node.measure.op = "null";
  assert.deepStrictEqual(written(alone(node), cat).where, {
    actions: { max: { createdAt: null } },
  });
  const read60 = behaviourOf(read({ actions: { max: { createdAt: { lt: { ago: "P60D" } } } } }, cat));
  assert.deepEqual([read60.measure.field, read60.measure.op, read60.measure.value], [
    "createdAt",
    "lt",
    "60 days ago",
  ]);
});

test("choosing an aggregate offers the fields the catalogue says it may be of", () => {
  const relation = relationsOf(service()).get("actions");
  assert.deepEqual([...relation.aggregates.get("sum").keys()], ["increase"]);
  assert.deepEqual([...relation.aggregates.get("max").keys()], ["increase", "createdAt"]);
  const node = behaviour({ quantifier: "count" });
  node.measure.value = "3";
  node.quantifier = "sum";
  const sum = measureFor(node, relation);
  assert.deepEqual([sum.field, sum.op, sum.value], ["increase", "gte", "3"]);
});

test("a data key holding a dot is one key, not two", () => {
  const cat = service();
  const canonical = { data: { path: ["utm.source", "x"], equals: "news" } };
  const tree = read(canonical, cat);
  const only = tree.children[0];
  assert.deepEqual(only.keys, ["utm.source", "x"]);
  assert.deepStrictEqual(written(tree, cat).where, canonical);
  const built = rule("data", "equals", "news", { keys: ["a.b"] });
  assert.deepStrictEqual(written(alone(built), cat).where, {
    data: { path: ["a.b"], equals: "news" },
  });
});

test("the page's own checks reach the rules inside a behaviour", () => {
  const cat = service();
  const node = behaviour({ quantifier: "some", name: "buy" });
  const inside = rule("increase", "gt", "lots");
  node.more = group("AND", [inside], false, "object");
  const count = behaviour({ quantifier: "count" });
  count.measure.value = "";
  const found = problems(group("AND", [node, count]), fieldsOf(cat), new Set(), relationsOf(cat));
  assert.match(found.get(inside.id)[0], /expected a number, found “lots”/);
  assert.match(found.get(count.measure.id)[0], /enter a number/);
});
