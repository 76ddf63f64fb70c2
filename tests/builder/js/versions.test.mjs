// The builder's history of an audience (versions.js): a version as lines, and the line
// difference between two versions.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  lineDiff,
  textLines,
  versionLabel,
  versionLines,
} from "../../../src/audiencefilter/service/static/builder/versions.js";

test("a filter is cut before each top-level AND or OR, never inside quotes or parentheses", () => {
  assert.deepEqual(textLines('country = "DE" AND points >= 10'), [
    'country = "DE"',
    "AND points >= 10",
  ]);
  assert.deepEqual(textLines('name = "Tom AND Jerry" OR (a = 1 AND b = 2)'), [
    'name = "Tom AND Jerry"',
    "OR (a = 1 AND b = 2)",
  ]);
  assert.deepEqual(textLines('tag in ["x AND y"] AND "q\\" AND" = name'), [
    'tag in ["x AND y"]',
    'AND "q\\" AND" = name',
  ]);
  assert.deepEqual(textLines(""), []);
  assert.deepEqual(textLines(null), []);
});

test("a version reads as its name, its mode and its filter's lines", () => {
  const version = { name: "Germany", mode: "smart", filtersText: 'country = "DE" AND points >= 1' };
  assert.deepEqual(versionLines(version), [
    "name: Germany",
    "mode: smart",
    'country = "DE"',
    "AND points >= 1",
  ]);
  assert.deepEqual(versionLines({ name: "Picked", mode: "manual", filtersText: null }), [
    "name: Picked",
    "mode: manual",
    "(no filter)",
  ]);
});

test("the difference keeps unchanged lines and marks the changed one out and in", () => {
  const before = ["name: A", "mode: smart", 'country = "DE"', "AND points >= 1"];
  const after = ["name: A", "mode: smart", 'country = "FR"', "AND points >= 1"];
  assert.deepEqual(lineDiff(before, after), [
    { mark: " ", line: "name: A" },
    { mark: " ", line: "mode: smart" },
    { mark: "-", line: 'country = "DE"' },
    { mark: "+", line: 'country = "FR"' },
    { mark: " ", line: "AND points >= 1" },
  ]);
  assert.deepEqual(lineDiff([], ["x"]), [{ mark: "+", line: "x" }]);
  assert.deepEqual(lineDiff(["x"], []), [{ mark: "-", line: "x" }]);
  assert.deepEqual(lineDiff(["a", "b"], ["a", "b"]), [
    { mark: " ", line: "a" },
    { mark: " ", line: "b" },
  ]);
});

test("a version's label says its number, when, which key, what it restored", () => {
  const version = {
    number: 3,
    createdAt: "2031-06-01T08:20:00.123Z",
    keyId: "key_1",
    restoredFrom: 1,
    current: true,
  };
  assert.equal(versionLabel(version), "v3 · 2031-06-01 08:20 · key_1 (restores v1) · current");
  assert.equal(
    versionLabel({ number: 1, createdAt: "2031-06-01T08:00:00Z", keyId: null }),
    "v1 · 2031-06-01 08:00 · key not recorded",
  );
  assert.equal(
    versionLabel({ number: 2, createdAt: "2031-06-01T08:00:00Z", keyId: "key_1", keyLabel: "crm-sync" }),
    "v2 · 2031-06-01 08:00 · crm-sync",
  );
});
