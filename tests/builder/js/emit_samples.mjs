// Prints, as JSON, the where clause the page writes for every control it offers: each
// operator of each field of a catalogue holding every type (with a sample value of the
// field's type), each value kind (another field, the start of a period), and each behaviour
// over actions. tests/builder/test_page_modules.py has the library read every one of them:
// the page must never write a filter the library refuses.

import { readFileSync } from "node:fs";

import {
  AGGREGATES,
  behaviour,
  group,
  measureFor,
  operatorsFor,
  relationsOf,
  rule,
  toWhere,
  valueKinds,
} from "../../../src/audiencefilter/service/static/builder/model.js";

const answers = JSON.parse(readFileSync(process.env.AUDIENCEFILTER_PAGE_CASES, "utf8"));
const catalogue = answers.everyType;
const fields = new Map(catalogue.fields.map((f) => [f.key, f]));

const SAMPLES = {
  string: "vip",
  number: "5",
  boolean: "true",
  date: "2025-01-31",
  datetime: "2025-01-31",
  json: "gold",
};

function sample(field, input) {
  const element = field.type.replace("[]", "");
  const one = SAMPLES[element];
  if (input === "list") return element === "boolean" ? "true, false" : `${one}, ${one}`;
  return one;
}

const contact = answers.catalogues.contact;
const relations = relationsOf(contact);
const contactFields = new Map(contact.fields.map((f) => [f.key, f]));

const out = [];
const write = (schema, node) => {
  const scope = schema === "contact" ? contactFields : fields;
  const { where } = toWhere(group("AND", [node]), scope, relations);
  out.push({ schema, where });
};
for (const field of catalogue.fields) {
  for (const { op, input } of operatorsFor(field)) {
    const extra = field.type === "json" ? { keys: ["plan"] } : {};
    write("everyType", rule(field.key, op, sample(field, input), extra));
    const calendar = field.type === "date" || field.type === "datetime";
    if (calendar && ["equals", "not", "gt", "gte", "lt", "lte"].includes(op)) {
      write("everyType", rule(field.key, op, "30 days ago", extra));
    }
    for (const kind of valueKinds(field, op).slice(1)) {
      const other = catalogue.fields.find(
        (f) => f.type === field.type && f.key !== field.key && !f.custom,
      );
      const ref = other ? other.key : field.key;
      for (const offset of ["-1", "0", "2"]) {
        const start = { unit: "month", offset, zone: "America/New_York" };
        write("everyType", rule(field.key, op, "", { valueKind: kind, ref, start }));
      }
    }
    if (input === "period") {
      for (const dir of ["last", "this", "next"]) {
        const period = { dir, n: "3", unit: "week", zone: "Europe/Paris" };
        write("everyType", rule(field.key, op, "", { period }));
      }
    }
  }
}
for (const quantifier of ["count", ...AGGREGATES, "some", "none", "every"]) {
  for (const increased of [false, true]) {
    for (const windowed of [false, true]) {
      const node = behaviour({ quantifier, name: "share", increased, windowed, windowUnit: "week" });
      node.measure = measureFor(node, relations.get("actions"));
      write("contact", node);
    }
  }
}
// Every comparison a count or an aggregate offers, on each value it may be of, and the rules
// a behaviour holds besides its quick controls (several, and an OR of them).
const actions = relations.get("actions");
for (const [quantifier, values] of actions.aggregates) {
  for (const field of values.values()) {
    for (const { op, input } of operatorsFor(field)) {
      const node = behaviour({ quantifier, name: "share" });
      node.measure = rule(field.key, op, sample(field, input), {
        period: { dir: "last", n: "2", unit: "week", zone: "" },
      });
      write("contact", node);
    }
  }
}
for (const combinator of ["AND", "OR"]) {
  for (const quantifier of ["some", "none", "every", "count", "max"]) {
    const node = behaviour({ quantifier, name: "purchase", increased: true });
    node.measure = measureFor(node, actions);
    node.measure.value = "2";
    node.more = group(combinator, [
      rule("increase", "gt", "10"),
      rule("createdAt", "within", "", { period: { dir: "last", n: "30", unit: "day", zone: "" } }),
      rule("name", "equals", "buy", { insensitive: true }),
    ]);
    write("contact", node);
  }
}
write("everyType", rule("data", "equals", "gold", { keys: ["utm.source", "", "x"] }));
process.stdout.write(JSON.stringify(out));
