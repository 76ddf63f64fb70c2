// The builder's rule tree and its two translations: to a where clause (JSON) with the path of
// every node, so that the library's error paths (`AND[1].points.gte`) find their rule; and
// from the canonical where clause the service answers, so that the text box can drive the
// builder. Anything the builder has no control for stays a "raw" node holding its JSON.

export const UNITS = ["day", "week", "month", "year"];
// An anniversary starts as "within this week": a birthday or sign-up message goes out weekly
// far more often than daily, and "today" misses anyone whose day fell while no run happened
// (a weekend, an outage); a month is too coarse for a greeting. See docs/builder.md.
export const ANNIVERSARY_PERIOD = { dir: "this", n: "1", unit: "week", zone: "" };
const DURATION_UNITS = ["year", "month", "week", "day", "hour", "minute", "second"];
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const AGO = /^\s*((?:\d+(?:\.\d+)?\s*[a-zA-Z]+\s*)+)ago\s*$/;

let counter = 0;
export function newId() {
  counter += 1;
  return `n${counter}`;
}

// ---- nodes ---------------------------------------------------------------------------------

export function group(combinator = "AND", children = [], negated = false, form = "list") {
  // `form` is how the group is written: "list" (`{"AND": [...]}`), "object" (its items merged
  // into one where object, as a read filter spelled them) or "field" (a field's `not` of an
  // operator object, `{"f": {"not": {...}}}`). The reader keeps the form it read, so the
  // writer gives the library's canonical JSON back unchanged.
  return { kind: "group", id: newId(), combinator, negated, children, form };
}

export function rule(field, op, value = "", extra = {}) {
  return {
    kind: "rule",
    id: newId(),
    field,
    op,
    value,
    // The keys of a path inside a JSON field, one per level: a key may hold a dot
    // (`["x.y"]`), so the path is never one dotted string.
    keys: [""],
    insensitive: false,
    period: { dir: "last", n: "7", unit: "day", zone: "" },
    // What a comparison compares with: a value typed in, another field ({"_ref": ...}) or
    // the start of a calendar period ({"startOf": ...}).
    valueKind: "value",
    ref: "",
    start: { unit: "day", offset: "0", zone: "" },
    ...extra,
  };
}

export function behaviour(extra = {}) {
  // A condition over the contact's actions. The common parts have quick controls (the
  // action's name, an increase compared with a number, a recent window); any other condition
  // on the actions is a group of rules over the relation's fields (`more`), written into the
  // same where clause. `measure` is what a count or an aggregate is compared with: a rule (or
  // a group, for a negated or a two-sided test) on a one-field scope, `count` itself or the
  // aggregated field (`increase`, `createdAt`), read and written as any rule is.
  const id = newId();
  return {
    kind: "behaviour",
    id,
    relation: "actions",
    quantifier: "count",
    name: "",
    windowed: false,
    windowN: "30",
    windowUnit: "day",
    increased: false,
    increaseOp: "gte",
    increaseValue: "1",
    order: ["name", "increase", "createdAt"],
    more: null,
    measure: rule("count", "gte", "1", { id: `${id}-count` }),
    ...extra,
  };
}

export function audienceRef(audienceId = "", quantifier = "some") {
  return { kind: "audience", id: newId(), quantifier, audienceId };
}

export function raw(json) {
  return { kind: "raw", id: newId(), json };
}

// ---- operators -----------------------------------------------------------------------------

// Which operators a field offers is the catalogue's answer (`GET /v4/lists/{listId}/fields`):
// each field lists the operators the library takes for it (`operators`) and whether it takes
// `mode: "insensitive"` (`insensitive`). The page keeps only how each one is shown: its
// controls below, each writing the library operator `key`, labelled by the kind of value the
// field holds. A control is offered when the field takes its key; the null tests always are.

const CONTROLS = [
  { op: "equals", key: "equals", input: "value", label: { number: "=", other: "is" } },
  { op: "not", key: "equals", input: "value", label: { number: "≠", other: "is not" } },
  { op: "contains", key: "contains", input: "value", label: "contains" },
  { op: "startsWith", key: "startsWith", input: "value", label: "starts with" },
  { op: "endsWith", key: "endsWith", input: "value", label: "ends with" },
  { op: "has", key: "has", input: "value", label: "has" },
  { op: "has", key: "array_contains", input: "value", label: "array has" },
  { op: "arrayHasEvery", key: "array_contains", input: "list", label: "array has every one of" },
  { op: "arrayStartsWith", key: "array_starts_with", input: "value", label: "array starts with" },
  { op: "arrayEndsWith", key: "array_ends_with", input: "value", label: "array ends with" },
  { op: "hasSome", key: "hasSome", input: "list", label: "has some of" },
  { op: "hasEvery", key: "hasEvery", input: "list", label: "has every one of" },
  { op: "isEmpty", key: "isEmpty", input: "none", label: "is empty" },
  { op: "notEmpty", key: "isEmpty", input: "none", label: "is not empty" },
  { op: "in", key: "in", input: "list", label: "is one of" },
  { op: "notIn", key: "notIn", input: "list", label: "is none of" },
  { op: "gte", key: "gte", input: "value", label: { calendar: "on or after", other: "≥" } },
  { op: "gt", key: "gt", input: "value", label: { calendar: "after", other: ">" } },
  { op: "lte", key: "lte", input: "value", label: { calendar: "on or before", other: "≤" } },
  { op: "lt", key: "lt", input: "value", label: { calendar: "before", other: "<" } },
  { op: "within", key: "within", input: "period", label: "within" },
  { op: "anniversary", key: "anniversary", input: "period", label: "anniversary within" },
  { op: "blank", key: "blank", input: "none", label: "is blank" },
  { op: "notblank", key: "blank", input: "none", label: "is not blank" },
];
const NULL_TESTS = [
  { op: "null", key: null, label: "is null", input: "none" },
  { op: "notnull", key: null, label: "is not null", input: "none" },
];

function kindOf(type) {
  if (type === "number") return "number";
  if (type === "datetime" || type === "date") return "calendar";
  return "other";
}

function isList(type) {
  return Boolean(type && type.endsWith("[]"));
}

function shown(control, field) {
  if (control.key === "equals" && isList(field.type)) {
    // A list's equals is the whole list, in order.
    const label = control.op === "equals" ? "is exactly" : "is not exactly";
    return { op: control.op, key: control.key, label, input: "list" };
  }
  const label =
    typeof control.label === "string"
      ? control.label
      : control.label[kindOf(field.type)] || control.label.other;
  const input = field.type === "boolean" && control.input === "value" ? "boolean" : control.input;
  return { op: control.op, key: control.key, label, input };
}

export function unknownField(key) {
  // A field the catalogue does not hold (kept from a filter): the library takes none of its
  // operators, so only the null tests are offered and the library's message says why.
  return { key, type: "string", label: key, custom: false, operators: [], insensitive: false };
}

export function operatorsFor(field) {
  // The controls of the operators the library takes for `field` (a catalogue entry).
  const taken = new Set(field.operators || []);
  const offered = CONTROLS.filter((c) => taken.has(c.key)).map((c) => shown(c, field));
  return [...offered, ...NULL_TESTS];
}

export function operator(field, op) {
  const offered = operatorsFor(field);
  return offered.find((o) => o.op === op) || offered[0];
}

export function defaultOp(field) {
  const offered = operatorsFor(field).map((o) => o.op);
  const preferred = field.type === "number" ? "gte" : kindOf(field.type) === "calendar" ? "within" : null;
  return preferred && offered.includes(preferred) ? preferred : offered[0];
}

// ---- values --------------------------------------------------------------------------------

function elementType(type) {
  return isList(type) ? type.slice(0, -2) : type;
}

export function durationOf(text) {
  // "1 year 6 months ago" as an ISO 8601 duration (P1Y6M), or null.
  const match = AGO.exec(text);
  if (!match) return null;
  const parts = {};
  const words = /(\d+(?:\.\d+)?)\s*([a-zA-Z]+)/g;
  let word;
  while ((word = words.exec(match[1])) !== null) {
    const unit = word[2].toLowerCase().replace(/s$/, "");
    if (!DURATION_UNITS.includes(unit) || unit in parts) return null;
    parts[unit] = word[1];
  }
  const date = ["year", "month", "week", "day"]
    .filter((u) => u in parts)
    .map((u) => parts[u] + u[0].toUpperCase())
    .join("");
  const time = ["hour", "minute", "second"]
    .filter((u) => u in parts)
    .map((u) => parts[u] + u[0].toUpperCase())
    .join("");
  return `P${date}${time ? `T${time}` : ""}` === "P" ? null : `P${date}${time ? `T${time}` : ""}`;
}

const ISO_DURATION =
  /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

export function durationText(iso) {
  // P30D as "30 days", P1Y6M as "1 year 6 months"; null for another shape.
  const match = ISO_DURATION.exec(iso);
  if (!match) return null;
  const words = [];
  DURATION_UNITS.forEach((unit, index) => {
    const amount = match[index + 1];
    if (amount !== undefined) words.push(`${amount} ${unit}${amount === "1" ? "" : "s"}`);
  });
  return words.length ? words.join(" ") : "0 seconds";
}

function jsonLiteral(text) {
  // A value at a data path: numbers, true/false and null as JSON, "quoted" text as a string,
  // anything else as the text itself.
  const t = text.trim();
  if (NUMBER.test(t)) return Number(t);
  if (t === "true" || t === "false") return t === "true";
  if (t.startsWith('"') && t.endsWith('"') && t.length >= 2) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

export function valueOf(text, type) {
  // The typed value of what the user wrote; a value that does not fit is sent as written, so
  // that the library's message names the rule.
  const t = String(text);
  switch (elementType(type)) {
    case "number":
      return NUMBER.test(t.trim()) ? Number(t.trim()) : t;
    case "boolean":
      return t === "true" ? true : t === "false" ? false : t;
    case "datetime":
    case "date": {
      const ago = durationOf(t);
      return ago ? { ago } : t.trim();
    }
    case "json":
      return jsonLiteral(t);
    default:
      return t;
  }
}

function listOf(text, type) {
  // Items separated by commas, each as written: only the one space after a comma (as the
  // page writes lists) is not part of the next item, so "ann " keeps its space.
  if (!String(text).trim()) return [];
  return String(text)
    .split(/, ?/)
    .map((item) => valueOf(item, type));
}

function shownValue(value, type) {
  // The text a value is edited as; undefined when the builder has no control for it.
  if (value === null) return undefined;
  if (typeof value === "object") {
    if (!Array.isArray(value) && Object.keys(value).length === 1 && "ago" in value) {
      const words = durationText(value.ago);
      return words === null ? undefined : `${words} ago`;
    }
    return undefined;
  }
  if (Object.is(value, -0)) return "-0";
  if (type === "json" && typeof value === "string") {
    return NUMBER.test(value.trim()) || value === "true" || value === "false"
      ? JSON.stringify(value)
      : value;
  }
  return String(value);
}

function shownList(values, type) {
  if (!Array.isArray(values)) return undefined;
  const shown = values.map((v) => shownValue(v, type));
  const unclear = (s) => s === undefined || s.includes(",") || s.startsWith(" ") || s === "";
  if (shown.some(unclear)) return undefined;
  return shown.join(", ");
}

// ---- to a where clause ---------------------------------------------------------------------

function join(path, key) {
  return path ? `${path}.${key}` : key;
}

export function relationsOf(catalogue) {
  // The catalogue's relations by key, each with its fields and its aggregates by function,
  // as maps from key to catalogue entry: what a behaviour's rules and measure are over.
  const byKey = (entries) => new Map((entries || []).map((f) => [f.key, f]));
  return new Map(
    (catalogue.relations || []).map((r) => [
      r.key,
      {
        key: r.key,
        fields: byKey(r.fields),
        aggregates: new Map((r.aggregates || []).map((a) => [a.function, byKey(a.fields)])),
      },
    ]),
  );
}

export function toWhere(root, fields, relations = new Map()) {
  // `{where, paths}`: the where clause (null when the builder holds no condition) and the
  // JSON path of each node, keyed by path, for the library's error paths. `fields` maps each
  // key to its catalogue entry; `relations` is `relationsOf(catalogue)`.
  const paths = new Map();
  const empty = root.children.length === 0 && !root.negated && root.combinator === "AND";
  if (empty) return { where: null, paths };
  const where = emit(root, "", paths, { fields, relations });
  return { where, paths };
}

function emit(node, path, paths, scope) {
  paths.set(path, node.id);
  switch (node.kind) {
    case "group":
      return emitGroup(node, path, paths, scope);
    case "rule":
      return emitRule(node, scope.fields.get(node.field) || unknownField(node.field));
    case "behaviour":
      return emitBehaviour(node, path, paths, scope);
    case "audience":
      return { audiences: { [node.quantifier]: { id: { equals: node.audienceId } } } };
    default:
      return node.json;
  }
}

function mergeInto(target, object) {
  // Merges a where object into `target` when no key clashes (a field's operator objects are
  // merged key by key); false when they cannot share one object.
  for (const [key, value] of Object.entries(object)) {
    if (!(key in target)) {
      target[key] = value;
      continue;
    }
    const mergeable = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
    if (key === "AND" || key === "OR" || key === "NOT") return false;
    if (!mergeable(target[key]) || !mergeable(value)) return false;
    const ops = { ...target[key] };
    for (const [name, operand] of Object.entries(value)) {
      const same = JSON.stringify(ops[name]) === JSON.stringify(operand);
      if (name in ops && !((name === "path" || name === "mode") && same)) return false;
      ops[name] = operand;
    }
    target[key] = ops;
  }
  return true;
}

function emitMerged(node, path, paths, scope) {
  // An "object" group as one where object, or null when its items clash (then it is written
  // as a list). Its items' paths are the group's own: an error inside names the group.
  if (node.combinator !== "AND") return null;
  if (node.children.length === 0) return node.negated ? { NOT: {} } : {};
  const merged = {};
  for (const child of node.children) {
    const sub = new Map();
    if (!mergeInto(merged, emit(child, path, sub, scope))) return null;
  }
  for (const child of node.children) emit(child, path, paths, scope);
  paths.set(path, node.id);
  if (node.form === "field") {
    const [key] = Object.keys(merged);
    if (Object.keys(merged).length !== 1 || merged[key] === null || typeof merged[key] !== "object") {
      return null;
    }
    const { path: keyPath, mode, ...not } = merged[key];
    const ops = keyPath ? { path: keyPath, not } : { not };
    return { [key]: mode ? { ...ops, mode } : ops };
  }
  return node.negated ? { NOT: merged } : merged;
}

function emitGroup(node, path, paths, scope) {
  if (node.form === "none" && node.negated) {
    const items = node.children.map((child, i) => emit(child, `${join(path, "NOT")}[${i}]`, paths, scope));
    return { NOT: items };
  }
  if (node.form === "object" || node.form === "field") {
    const merged = emitMerged(node, path, paths, scope);
    if (merged) return merged;
  }
  const inner = join(node.negated ? join(path, "NOT") : path, node.combinator);
  const items = node.children.map((child, index) =>
    emit(child, `${inner}[${index}]`, paths, scope),
  );
  const body = { [node.combinator]: items };
  return node.negated ? { NOT: body } : body;
}

function periodOf(period) {
  const out = {};
  if (period.dir === "this") out.this = period.unit;
  else {
    const n = String(period.n).trim();
    out[period.dir] = NUMBER.test(n) ? Number(n) : n;
    out.unit = period.unit;
  }
  if (period.zone.trim()) out.timeZone = period.zone.trim();
  return out;
}

// The operators whose value may be another field or the start of a period.
export const REFERABLE = ["equals", "gt", "gte", "lt", "lte"];

export function valueKinds(field, op) {
  // What the value of `op` on `field` may be: always typed in; another field for a scalar
  // comparison between two columns (a custom field, kept inside JSON, is not one); the start
  // of a period for a date or date-time.
  if (!REFERABLE.includes(op) || isList(field.type) || field.type === "json") return ["value"];
  const kinds = field.custom ? ["value"] : ["value", "field"];
  if (kindOf(field.type) === "calendar") kinds.push("startOf");
  return kinds;
}

function startOfValue(start) {
  const out = { startOf: start.unit };
  const offset = String(start.offset).trim();
  if (offset !== "" && offset !== "0") out.offset = NUMBER.test(offset) ? Number(offset) : offset;
  if (start.zone.trim()) out.timeZone = start.zone.trim();
  return out;
}

function operand(node, type) {
  if (REFERABLE.includes(node.op) && node.valueKind === "field") {
    return [node.op, { _ref: node.ref }];
  }
  if (REFERABLE.includes(node.op) && node.valueKind === "startOf") {
    return [node.op, startOfValue(node.start)];
  }
  switch (node.op) {
    case "null":
      return ["equals", null];
    case "notnull":
      return ["not", null];
    case "blank":
    case "notblank":
      return ["blank", node.op === "blank"];
    case "isEmpty":
    case "notEmpty":
      return ["isEmpty", node.op === "isEmpty"];
    case "within":
    case "anniversary":
      return [node.op, periodOf(node.period)];
    case "in":
    case "notIn":
    case "hasSome":
    case "hasEvery":
      return [node.op, listOf(node.value, type)];
    case "has":
      return [type === "json" ? "array_contains" : "has", valueOf(node.value, type)];
    case "arrayHasEvery":
      return ["array_contains", listOf(node.value, type)];
    case "arrayStartsWith":
      return ["array_starts_with", valueOf(node.value, type)];
    case "arrayEndsWith":
      return ["array_ends_with", valueOf(node.value, type)];
    case "equals":
      return [node.op, isList(type) ? listOf(node.value, type) : valueOf(node.value, type)];
    case "not": {
      if (isList(type)) return ["not", listOf(node.value, type)];
      // A relative value is never a shorthand: its `not` keeps the `equals`.
      const value = valueOf(node.value, type);
      const relative = value !== null && typeof value === "object";
      return ["not", relative ? { equals: value } : value];
    }
    default:
      return [node.op, valueOf(node.value, type)];
  }
}

function emitRule(node, field) {
  const type = field.type;
  const [op, value] = operand(node, type);
  const ops = { [op]: value };
  if (node.insensitive && field.insensitive) ops.mode = "insensitive";
  if (type === "json") return { [node.field]: { path: [...node.keys], ...ops } };
  if (op === "equals" && value === null) return { [node.field]: null };
  return { [node.field]: ops };
}

function windowDuration(node) {
  const n = String(node.windowN).trim();
  if (node.windowUnit === "week" && /^\d+$/.test(n)) return `P${Number(n) * 7}D`;
  const letter = { day: "D", month: "M", year: "Y" }[node.windowUnit] || "D";
  return `P${n}${letter}`;
}

export const AGGREGATES = ["sum", "min", "max"];
export const COMPARISONS = ["gte", "gt", "equals", "lte", "lt"];

function numberOrText(text) {
  const n = String(text).trim();
  return NUMBER.test(n) ? Number(n) : n;
}

function ordered(object, order) {
  // `object` with the keys of `order` first (the order a filter was read in), then the rest.
  const out = {};
  for (const key of order) if (key in object) out[key] = object[key];
  for (const [key, value] of Object.entries(object)) if (!(key in out)) out[key] = value;
  return out;
}

function within(relation) {
  // The scope of the rules over a relation's rows: its fields, and no relation of its own.
  return { fields: relation.fields, relations: new Map() };
}

const NO_RELATION = { key: "", fields: new Map(), aggregates: new Map() };

function actionWhere(node, path, paths, relation) {
  // The where clause over the relation's rows: the quick controls' parts (name, increase,
  // createdAt), then the other conditions (`more`), merged into one object in the order the
  // keys were read; written as an AND of the two when they cannot share one object.
  const parts = {};
  if (node.name.trim()) parts.name = { equals: node.name.trim() };
  if (node.increased) parts.increase = { [node.increaseOp]: numberOrText(node.increaseValue) };
  if (node.windowed) parts.createdAt = { gte: { ago: windowDuration(node) } };
  if (!node.more || node.more.children.length === 0) return ordered(parts, node.order);
  const more = emit(node.more, path, paths, within(relation));
  const merged = { ...parts };
  if (!mergeInto(merged, more)) return { AND: [ordered(parts, node.order), more] };
  return ordered(merged, node.order);
}

export function measured(quantifier) {
  return quantifier === "count" || AGGREGATES.includes(quantifier);
}

function emitBehaviour(node, path, paths, scope) {
  const relation = scope.relations.get(node.relation) || NO_RELATION;
  const at = join(path, node.relation);
  if (!measured(node.quantifier)) {
    const where = actionWhere(node, join(at, node.quantifier), paths, relation);
    return { [node.relation]: { [node.quantifier]: where } };
  }
  const where = actionWhere(node, join(at, "where"), paths, relation);
  const narrowed = Object.keys(where).length ? { where } : {};
  const values = { fields: relation.aggregates.get(node.quantifier) || new Map(), relations: new Map() };
  const test = emit(node.measure, join(at, node.quantifier), paths, values);
  // A count is compared as a field named `count` (`{"count": {"gte": 3}}`); an aggregate's
  // test names the field it is of (`{"max": {"createdAt": {...}}}`).
  if (node.quantifier === "count") return { [node.relation]: { ...narrowed, ...test } };
  return { [node.relation]: { ...narrowed, [node.quantifier]: test } };
}

export function measureFor(node, relation) {
  // A fresh measure for the behaviour's quantifier (on choosing it): the number of rows for a
  // count, the first field an aggregate takes otherwise. The comparison typed so far is kept
  // when the new value takes it (a count >= 3 becomes a sum >= 3).
  const values = (relation || NO_RELATION).aggregates.get(node.quantifier) || new Map();
  const [field] = values.values();
  const previous = node.measure && node.measure.kind === "rule" ? node.measure : null;
  const id = `${node.id}-count`;
  if (!field) return rule(node.quantifier === "count" ? "count" : "increase", "gte", "1", { id });
  const keep = previous && field.type === "number" && operatorsFor(field).some((o) => o.op === previous.op);
  return keep
    ? rule(field.key, previous.op, previous.value, { id })
    : rule(field.key, defaultOp(field), "", { id });
}

// ---- from a where clause -------------------------------------------------------------------

export function fromWhere(where, fields, relations = new Map()) {
  // The tree of a canonical where clause; the root is always a group.
  const node = toNode(where, { fields, relations });
  return node.kind === "group" ? node : group("AND", [node], false, "object");
}

function toNode(object, scope) {
  if (object === null || typeof object !== "object" || Array.isArray(object)) return raw(object);
  const nodes = Object.entries(object).flatMap(([key, value]) => entryNodes(key, value, scope));
  return nodes.length === 1 ? nodes[0] : group("AND", nodes, false, "object");
}

function items(value) {
  return Array.isArray(value) ? value : [value];
}

function entryNodes(key, value, scope) {
  if (key === "AND" || key === "OR") {
    const children = items(value).map((item) => toNode(item, scope));
    return [group(key, children)];
  }
  if (key === "NOT") {
    // Prisma's NOT of a list is "none of them"; of an object, "not all of it".
    if (Array.isArray(value)) {
      return [group("OR", value.map((item) => toNode(item, scope)), true, "none")];
    }
    const inner = toNode(value, scope);
    if (inner.kind === "group" && !inner.negated) {
      return [group(inner.combinator, inner.children, true, inner.form)];
    }
    return [group("AND", [inner], true, "object")];
  }
  const parsed = parseEntry(key, value, scope);
  return parsed || [raw({ [key]: value })];
}

function parseEntry(key, value, scope) {
  if (key === "audiences") return wrap(parseAudience(value));
  if (scope.relations.has(key)) return wrap(parseBehaviour(value, scope.relations.get(key)));
  if (!scope.fields.has(key)) return null;
  const type = scope.fields.get(key).type;
  return type === "json" ? parseJsonField(key, value) : parseField(key, value, type);
}

function wrap(node) {
  return node ? [node] : null;
}

function parseField(key, value, type) {
  if (value === null) return [rule(key, "null")];
  if (typeof value !== "object") {
    const shown = shownValue(value, type);
    return shown === undefined ? null : [rule(key, "equals", shown)];
  }
  if (Array.isArray(value)) {
    const shown = isList(type) ? shownList(value, type) : undefined;
    return shown === undefined ? null : [rule(key, "equals", shown)];
  }
  return parseOps(key, value, type, {});
}

function parseJsonField(key, value) {
  if (value === null || typeof value !== "object" || !Array.isArray(value.path)) return null;
  if (value.path.length === 0 || value.path.some((k) => typeof k !== "string")) return null;
  const { path, ...ops } = value;
  return parseOps(key, ops, "json", { keys: [...path] });
}

const JSON_ALIASES = {
  string_contains: "contains",
  string_starts_with: "startsWith",
  string_ends_with: "endsWith",
  array_contains: "has",
  array_starts_with: "arrayStartsWith",
  array_ends_with: "arrayEndsWith",
};

function parseOps(key, ops, type, extra) {
  const insensitive = "mode" in ops ? ops.mode === "insensitive" : Boolean(extra.insensitive);
  const nodes = [];
  for (const [name, value] of Object.entries(ops)) {
    if (name === "mode") continue;
    const node = parseOp(key, JSON_ALIASES[name] || name, value, type, { ...extra, insensitive });
    if (!node) return null;
    nodes.push(node);
  }
  return nodes;
}

function parseReferable(key, op, value, extra) {
  // `{"_ref": "points"}` or `{"startOf": "month", "offset": -1, "timeZone": ...}` as the
  // value of a comparison; null for anything else.
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  if (keys.length === 1 && typeof value._ref === "string") {
    return rule(key, op, "", { ...extra, valueKind: "field", ref: value._ref });
  }
  const known = keys.every((k) => ["startOf", "offset", "timeZone"].includes(k));
  if (!known || !UNITS.includes(value.startOf)) return null;
  if (value.offset !== undefined && !Number.isInteger(value.offset)) return null;
  if (value.timeZone !== undefined && typeof value.timeZone !== "string") return null;
  if (value.offset === 0) return null; // written without it: keep the spelling read
  const start = {
    unit: value.startOf,
    offset: value.offset === undefined ? "0" : String(value.offset),
    zone: value.timeZone || "",
  };
  const canonical = JSON.stringify(startOfValue(start)) === JSON.stringify(value);
  return canonical ? rule(key, op, "", { ...extra, valueKind: "startOf", start }) : null;
}

function parseOp(key, op, value, type, extra) {
  const simple = (name, shown) => (shown === undefined ? null : rule(key, name, shown, extra));
  if (REFERABLE.includes(op) && value !== null && typeof value === "object" && !Array.isArray(value)) {
    const referred = parseReferable(key, op, value, extra);
    if (referred) return referred;
  }
  switch (op) {
    case "equals":
      if (value === null) return rule(key, "null", "", extra);
      return simple("equals", Array.isArray(value) ? shownList(value, type) : shownValue(value, type));
    case "not":
      return parseNot(key, value, type, extra);
    case "blank":
      return rule(key, value ? "blank" : "notblank", "", extra);
    case "isEmpty":
      return rule(key, value ? "isEmpty" : "notEmpty", "", extra);
    case "within":
    case "anniversary": {
      const period = parsePeriod(value);
      return period ? rule(key, op, "", { ...extra, period }) : null;
    }
    case "in":
    case "notIn":
    case "hasSome":
    case "hasEvery":
      return simple(op, shownList(value, type));
    case "has":
      // A JSON array containing a list contains each of its values.
      if (Array.isArray(value)) return type === "json" ? simple("arrayHasEvery", shownList(value, type)) : null;
      return simple(op, shownValue(value, type));
    case "arrayStartsWith":
    case "arrayEndsWith":
      return Array.isArray(value) ? null : simple(op, shownValue(value, type));
    case "gt":
    case "gte":
    case "lt":
    case "lte":
    case "contains":
    case "startsWith":
    case "endsWith":
      return simple(op, shownValue(value, type));
    default:
      return null;
  }
}

function parseNot(key, value, type, extra) {
  if (value === null) return rule(key, "notnull", "", extra);
  if (typeof value === "object" && !Array.isArray(value) && !("ago" in value)) {
    const inner = parseOps(key, value, type, extra);
    return inner ? group("AND", inner, true, "field") : null;
  }
  const shown = Array.isArray(value) ? shownList(value, type) : shownValue(value, type);
  return shown === undefined ? null : rule(key, "not", shown, extra);
}

function parsePeriod(value) {
  if (value === null || typeof value !== "object") return null;
  const zone = typeof value.timeZone === "string" ? value.timeZone : "";
  const keys = Object.keys(value).filter((k) => k !== "timeZone");
  if (keys.length === 1 && keys[0] === "this" && UNITS.includes(value.this)) {
    return { dir: "this", n: "1", unit: value.this, zone };
  }
  const dir = keys.find((k) => k === "last" || k === "next");
  if (dir && keys.length === 2 && UNITS.includes(value.unit) && Number.isInteger(value[dir])) {
    return { dir, n: String(value[dir]), unit: value.unit, zone };
  }
  return null;
}

const WINDOW = /^P(\d+)([DMY])$/;

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function hasRaw(node) {
  if (node.kind === "raw") return true;
  if (node.kind === "behaviour") {
    return Boolean((node.more && hasRaw(node.more)) || (node.measure && hasRaw(node.measure)));
  }
  return node.kind === "group" && node.children.some(hasRaw);
}

function quickWindow(created, node) {
  // `{"gte": {"ago": "P30D"}}`: the window control ("in the last 30 days").
  const ago = isObject(created) && Object.keys(created).length === 1 && created.gte && created.gte.ago;
  const match = typeof ago === "string" ? WINDOW.exec(ago) : null;
  if (!match || Object.keys(created.gte).length !== 1) return false;
  const unit = { D: "day", M: "month", Y: "year" }[match[2]];
  const weeks = unit === "day" && Number(match[1]) % 7 === 0 && Number(match[1]) > 0;
  node.windowed = true;
  node.windowN = weeks ? String(Number(match[1]) / 7) : match[1];
  node.windowUnit = weeks ? "week" : unit;
  return true;
}

function quickName(name, node) {
  if (!isObject(name) || Object.keys(name).length !== 1 || typeof name.equals !== "string") {
    return false;
  }
  node.name = name.equals;
  return true;
}

function quickIncrease(increase, node) {
  const compared = parseCompared(increase);
  if (!compared) return false;
  node.increased = true;
  [node.increaseOp, node.increaseValue] = compared;
  return true;
}

const QUICK = { name: quickName, increase: quickIncrease, createdAt: quickWindow };

function parseCompared(object) {
  // `{"gte": 3}`: one comparison with a number, as [op, text], or null.
  const ops = isObject(object) ? Object.keys(object) : [];
  const op = ops[0];
  if (ops.length !== 1 || !COMPARISONS.includes(op) || typeof object[op] !== "number") return null;
  return [op, shownValue(object[op], "number")];
}

function parseActionWhere(where, node, relation) {
  // The quick controls take the parts they can show; every other key is read as rules over
  // the relation's fields (`more`). False when some part has no control at all.
  if (!isObject(where)) return false;
  node.order = Object.keys(where);
  const rest = {};
  for (const [key, value] of Object.entries(where)) {
    const quick = Object.hasOwn(QUICK, key) && relation.fields.has(key) ? QUICK[key] : null;
    if (!(quick && quick(value, node))) rest[key] = value;
  }
  if (Object.keys(rest).length === 0) return true;
  const more = toNode(rest, within(relation));
  if (hasRaw(more)) return false;
  node.more = more.kind === "group" ? more : group("AND", [more], false, "object");
  return true;
}

function parseMeasure(quantifier, operand, relation) {
  // What a count or an aggregate is compared with, read as rules on its one-field scope:
  // `count` for a count, the field an aggregate is of otherwise.
  const values = relation.aggregates.get(quantifier);
  if (!values) return null;
  const object = quantifier === "count" ? { count: operand } : operand;
  if (!isObject(object) || Object.keys(object).length !== 1) return null;
  if (!values.has(Object.keys(object)[0])) return null;
  const node = toNode(object, { fields: values, relations: new Map() });
  return hasRaw(node) ? null : node;
}

function parseBehaviour(value, relation) {
  if (!isObject(value)) return null;
  const keys = Object.keys(value).filter((k) => k !== "where");
  if (keys.length !== 1) return null;
  const [quantifier] = keys;
  const node = behaviour({ relation: relation.key, quantifier });
  if (["some", "none", "every"].includes(quantifier)) {
    if (value.where !== undefined) return null;
    return parseActionWhere(value[quantifier], node, relation) ? node : null;
  }
  if (value.where !== undefined && !parseActionWhere(value.where, node, relation)) return null;
  const measure = parseMeasure(quantifier, value[quantifier], relation);
  if (!measure) return null;
  if (measure.kind === "rule") measure.id = `${node.id}-count`;
  node.measure = measure;
  return node;
}

function parseAudience(value) {
  if (value === null || typeof value !== "object") return null;
  const keys = Object.keys(value);
  if (keys.length !== 1 || (keys[0] !== "some" && keys[0] !== "none")) return null;
  const where = value[keys[0]];
  const id = where && where.id;
  const onlyId = where && Object.keys(where).length === 1 && id && Object.keys(id).length === 1;
  if (!onlyId || typeof id.equals !== "string") return null;
  return audienceRef(id.equals, keys[0]);
}

// ---- errors --------------------------------------------------------------------------------

export function nodeOfPath(paths, errorPath) {
  // The node an error path belongs to: the one whose path is its longest prefix.
  let best = null;
  let length = -1;
  for (const [path, id] of paths) {
    const prefix =
      path === "" ||
      errorPath === path ||
      errorPath.startsWith(`${path}.`) ||
      errorPath.startsWith(`${path}[`);
    if (prefix && path.length > length) {
      best = id;
      length = path.length;
    }
  }
  return best;
}

function inner(node) {
  // The nodes a node holds: a group's items, a behaviour's other conditions and measure.
  if (node.kind === "group") return node.children;
  if (node.kind === "behaviour") return [node.more, node.measure].filter(Boolean);
  return [];
}

export function findNode(root, id) {
  if (root.id === id) return root;
  for (const child of inner(root)) {
    const found = findNode(child, id);
    if (found) return found;
  }
  return null;
}

export function parentOf(root, id) {
  for (const child of inner(root)) {
    if (child.id === id) return root;
    const found = parentOf(child, id);
    if (found) return found;
  }
  return null;
}

// ---- checks in the page --------------------------------------------------------------------

// What the page can tell is unfinished or mistyped before asking the service: a value the
// page cannot type (a word where a number goes, an empty number or date), a zone that is not
// in the library's list, a comparison with no field chosen. Sending those would only earn a
// 400 per keystroke; everything else is left to the library, whose messages are the rule.

function numberProblem(text, what = "a number") {
  const t = String(text).trim();
  if (t === "") return `enter ${what}`;
  return NUMBER.test(t) ? null : `expected ${what}, found “${t}”`;
}

function zoneProblem(zone, zones) {
  const z = zone.trim();
  if (!z || !zones || zones.size === 0 || zones.has(z)) return null;
  return `unknown time zone “${z}”: pick one from the list`;
}

function ruleProblems(node, field, zones) {
  const out = [];
  const control = operator(field, node.op);
  const element = elementType(field.type);
  if (control.input === "period") {
    if (node.period.dir !== "this") {
      const n = String(node.period.n).trim();
      if (!/^\d+$/.test(n)) out.push(n ? `expected a whole number, found “${n}”` : "enter a number");
    }
    const zone = zoneProblem(node.period.zone, zones);
    if (zone) out.push(zone);
    return out;
  }
  if (control.input !== "value" && control.input !== "list") return out;
  if (REFERABLE.includes(node.op) && node.valueKind === "field") {
    if (!node.ref) out.push("choose the other field");
    return out;
  }
  if (REFERABLE.includes(node.op) && node.valueKind === "startOf") {
    const zone = zoneProblem(node.start.zone, zones);
    if (zone) out.push(zone);
    return out;
  }
  const texts = control.input === "list" ? String(node.value).split(/, ?/) : [String(node.value)];
  if (control.input === "list" && !String(node.value).trim()) return out;
  for (const text of texts) {
    if (element === "number") {
      const problem = numberProblem(text);
      if (problem) out.push(problem);
    } else if ((element === "date" || element === "datetime") && !text.trim()) {
      out.push("enter a date, or a time such as 30 days ago");
    }
  }
  return out;
}

function behaviourProblems(node) {
  const out = [];
  if (node.windowed) {
    const n = String(node.windowN).trim();
    if (!/^\d+$/.test(n)) out.push(n ? `expected a whole number, found “${n}”` : "enter a number");
  }
  if (node.increased) {
    const problem = numberProblem(node.increaseValue, "a number for the increase");
    if (problem) out.push(problem);
  }
  return out;
}

export function problems(root, fields, zones, relations = new Map()) {
  // Map of node id -> messages, empty when the page has nothing to say before the service.
  const found = new Map();
  const visit = (node, scope) => {
    let messages = [];
    if (node.kind === "group") node.children.forEach((child) => visit(child, scope));
    else if (node.kind === "rule") {
      const field = scope.get(node.field) || unknownField(node.field);
      messages = ruleProblems(node, field, zones);
    } else if (node.kind === "behaviour") {
      messages = behaviourProblems(node);
      const relation = relations.get(node.relation) || NO_RELATION;
      if (node.more) visit(node.more, relation.fields);
      if (measured(node.quantifier)) {
        visit(node.measure, relation.aggregates.get(node.quantifier) || new Map());
      }
    } else if (node.kind === "audience" && !node.audienceId) messages = ["choose an audience"];
    if (messages.length) found.set(node.id, messages);
  };
  visit(root, fields);
  return found;
}

export function snapshot(root) {
  // A copy of the tree for the undo history (plain data: no functions, no cycles).
  return JSON.parse(JSON.stringify(root));
}

// ---- background builds ---------------------------------------------------------------------

const COUNT = new Intl.NumberFormat("en-US");

export function building(audience) {
  // An audience the service is still building in the background (`status: "building"`).
  return Boolean(audience) && audience.status === "building";
}

export function buildText(progress) {
  // "Building… 40,000 of 200,000 contacts": contacts judged of the list's, from `progress`.
  if (!progress) return "Building…";
  const noun = progress.total === 1 ? "contact" : "contacts";
  return `Building… ${COUNT.format(progress.done)} of ${COUNT.format(progress.total)} ${noun}`;
}
