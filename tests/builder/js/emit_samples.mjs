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
  operatorsFor,
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

const out = [];
const write = (schema, node) => {
  const { where } = toWhere(group("AND", [node]), fields);
  out.push({ schema, where });
};
for (const field of catalogue.fields) {
  for (const { op, input } of operatorsFor(field)) {
    const extra = field.type === "json" ? { path: "plan" } : {};
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
      write("contact", node);
    }
  }
}
process.stdout.write(JSON.stringify(out));
