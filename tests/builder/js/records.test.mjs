// The builder's export and erase (records.js): the download's name and an erasure in words.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  erasureText,
  fileName,
  sizeText,
} from "../../../src/audiencefilter/service/static/builder/records.js";

test("an export is named by its audience, without characters file systems refuse", () => {
  assert.equal(fileName("Big spenders", "aud_1.csv"), "Big spenders.csv");
  assert.equal(fileName('VIP: FR/DE "2026"', "aud_1.csv"), "VIP_ FR_DE _2026_.csv");
  assert.equal(fileName("", "aud_1.csv"), "aud_1.csv");
  assert.equal(sizeText(120), "120 bytes");
  assert.equal(sizeText(2048), "2.0 kB");
});

test("an erasure says what it did", () => {
  const done = { deleted: true, events: 1, deliveries: 0, answers: 2 };
  assert.equal(
    erasureText("ann@example.com", done),
    "Erased ann@example.com: the contact was deleted; 1 event, 0 webhook deliveries and " +
      "2 recorded answers redacted. The list refuses this e-mail from now on (suppressed).",
  );
  assert.match(erasureText("a@b.c", { ...done, deleted: false }), /already deleted before/);
});
