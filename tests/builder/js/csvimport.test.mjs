// The CSV upload's own reading: the header row of a file, and the mapping sent to the service.
import assert from "node:assert/strict";
import { test } from "node:test";

import { headerOf, mappingOf } from "../../../src/audiencefilter/service/static/builder/csvimport.js";

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
