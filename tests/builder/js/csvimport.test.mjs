// The CSV upload's own reading: the header row of a file, and the mapping sent to the service.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  delimiterOf,
  fieldFor,
  formatQuery,
  headerOf,
  mappingOf,
} from "../../../src/audiencefilter/service/static/builder/csvimport.js";

test("the header row is the first record, quoted cells included", () => {
  assert.deepEqual(headerOf('\uFEFFE-mail address,"Land, country","say ""hi"""\r\na,b,c\n'), [
    "E-mail address",
    "Land, country",
    'say "hi"',
  ]);
  assert.deepEqual(headerOf("email"), ["email"]);
});

test("the mapping names only the columns that are not their own field", () => {
  const select = (column, value) => ({ dataset: { column }, value });
  const mapping = mappingOf([
    select("email", "email"),
    select("E-mail address", "email"),
    select("Notes", ""),
    select("Geburtstag", "birthday"),
  ]);
  assert.deepEqual(mapping, { "E-mail address": "email", Notes: null, Geburtstag: "birthday" });
});

test("a header without commas is split by the separator it holds", () => {
  assert.equal(delimiterOf("email;Signed up;Lifetime value"), ";");
  assert.equal(delimiterOf("email\tplan"), "\t");
  assert.equal(delimiterOf("email"), ",");
  assert.deepEqual(headerOf('email;"a;b";plan\r\nx;y;z\n'), ["email", "a;b", "plan"]);
  assert.deepEqual(headerOf("email,plan;x", ";"), ["email,plan", "x"]);
  assert.deepEqual(headerOf("email\tplan", "tab"), ["email", "plan"]);
});

test("a column whose header is a field's label fills that field", () => {
  const known = ["email", "createdAt", "plan", "lifetimeValue"];
  const labels = { createdAt: "Signed up at", plan: "Plan", lifetimeValue: "Lifetime value" };
  assert.equal(fieldFor("email", known, labels), "email");
  assert.equal(fieldFor("Plan", known, labels), "plan");
  assert.equal(fieldFor(" lifetime  VALUE ", known, labels), "lifetimeValue");
  assert.equal(fieldFor("Notes", known, labels), "");
});

test("the format is sent only where it is not the service's default", () => {
  assert.deepEqual(formatQuery("ISO", ".", ""), {});
  assert.deepEqual(formatQuery("DMY", ",", ";"), { dateOrder: "DMY", decimal: ",", delimiter: ";" });
});
