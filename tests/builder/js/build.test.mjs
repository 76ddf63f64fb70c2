// What the builder page says of an audience built in the background (model.js), from the
// `status` and `progress` of the service's audience object.

import assert from "node:assert/strict";
import { test } from "node:test";

import { buildText, building } from "../../../src/audiencefilter/service/static/builder/model.js";

test("the progress reads as contacts judged of the list's, with thousands grouped", () => {
  assert.equal(buildText({ done: 40000, total: 200000 }), "Building… 40,000 of 200,000 contacts");
  assert.equal(buildText({ done: 0, total: 8 }), "Building… 0 of 8 contacts");
  assert.equal(buildText({ done: 0, total: 1 }), "Building… 0 of 1 contact");
  assert.equal(buildText(null), "Building…");
});

test("only an audience whose status says so is building", () => {
  assert.equal(building({ status: "building", progress: { done: 0, total: 9 } }), true);
  assert.equal(building({ status: "built", progress: null }), false);
  assert.equal(building({}), false); // a service from before background builds
  assert.equal(building(null), false);
});
