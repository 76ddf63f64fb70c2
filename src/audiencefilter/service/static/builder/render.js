// The visual rule builder: renders the tree of model.js as labelled native controls (so Tab,
// Enter and Space work as everywhere), and edits it in place. Typing changes the model without
// re-rendering; a change of structure (a field, an operator, a node added or removed) renders
// the tree again and puts the focus back where it was.

import {
  ANNIVERSARY_PERIOD,
  UNITS,
  audienceRef,
  behaviour,
  defaultOp,
  group,
  measureFor,
  measured,
  operator,
  operatorsFor,
  parentOf,
  rule,
  unknownField,
  valueKinds,
} from "./model.js";

export const ZONE_LIST = "time-zones";
export const ACTION_NAMES = "action-names";

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      element.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
  }
  return element;
}

function label(forId, text, hidden = true) {
  return h("label", { for: forId, class: hidden ? "sr-only" : "inline-label", text });
}

function select(id, options, current, onChange, extra = {}) {
  const element = h(
    "select",
    { id, class: "control", onchange: (event) => onChange(event.target.value), ...extra },
    options.map(([value, text]) => h("option", { value, text })),
  );
  element.value = current;
  return element;
}

function input(id, value, onInput, extra = {}) {
  return h("input", {
    id,
    type: "text",
    class: "control",
    value,
    autocomplete: "off",
    spellcheck: "false",
    oninput: (event) => onInput(event.target.value),
    ...extra,
  });
}

function zoneInput(id, value, onInput) {
  // A zone picked from the library's list (a datalist on the page, filled from the field
  // catalogue's `timeZones`); wide enough for `America/Argentina/Buenos_Aires`.
  return input(id, value, onInput, {
    placeholder: "UTC",
    class: "control zone",
    list: ZONE_LIST,
  });
}

const COMPARE_OPS = [
  ["gte", "≥"],
  ["gt", ">"],
  ["equals", "="],
  ["lte", "≤"],
  ["lt", "<"],
];

function button(text, onClick, extra = {}) {
  return h("button", { type: "button", onclick: onClick, ...extra }, text);
}

const QUANTIFIERS = [
  ["count", "number of actions"],
  ["sum", "sum of"],
  ["min", "smallest"],
  ["max", "largest"],
  ["some", "did at least once"],
  ["none", "never did"],
  ["every", "every action was"],
];

export class Builder {
  // The builder in `container`: `ctx` holds the field catalogue (`fields`, `fieldOf` and the
  // relations by key, `relations`, as model.js's `relationsOf` gives them), the list's
  // audiences and the callback told of every change of the tree.
  //
  // Rules are drawn in a scope: the contact's fields at the top; a relation's fields inside a
  // behaviour's other conditions; the one value a count or an aggregate compares (`count`,
  // `increase`, `createdAt`) for its measure. A scope says which fields a rule may name and
  // what a group inside it may add.
  constructor(container, ctx) {
    this.container = container;
    this.ctx = ctx;
    this.root = group();
  }

  contactScope() {
    const fields = this.ctx.fields;
    return { fields, fieldOf: this.ctx.fieldOf, contact: true, references: true, pick: true };
  }

  relationOf(key) {
    return (this.ctx.relations && this.ctx.relations.get(key)) || null;
  }

  rowsScope(relationKey) {
    // The fields of a related row (an action's name, increase, createdAt).
    const relation = this.relationOf(relationKey);
    const byKey = relation ? relation.fields : new Map();
    const fieldOf = (key) => byKey.get(key);
    return { fields: [...byKey.values()], fieldOf, contact: false, references: true, pick: true };
  }

  valuesScope(node) {
    // What the behaviour's count or aggregate may be of: an aggregate names its field ("sum
    // of increase"), a count is of the rows themselves.
    const relation = this.relationOf(node.relation);
    const byKey = (relation && relation.aggregates.get(node.quantifier)) || new Map();
    const fieldOf = (key) => byKey.get(key);
    const pick = node.quantifier !== "count";
    return { fields: [...byKey.values()], fieldOf, contact: false, references: false, pick };
  }

  set(root) {
    this.root = root;
    this.render();
  }

  changed(structure) {
    if (structure) this.render();
    this.ctx.onChange(Boolean(structure));
  }

  render() {
    const focused = document.activeElement && document.activeElement.id;
    this.container.replaceChildren(this.groupView(this.root, true));
    const again = focused && document.getElementById(focused);
    if (again && this.container.contains(again)) again.focus();
  }

  focusFirst(id) {
    const node = document.getElementById(id);
    const control = node && node.querySelector("select, input, button");
    if (control) control.focus();
  }

  add(parent, node) {
    parent.children.push(node);
    this.changed(true);
    this.focusFirst(node.id);
  }

  remove(node) {
    const parent = parentOf(this.root, node.id);
    if (!parent) return;
    if (parent.kind === "behaviour") {
      // A behaviour's other conditions are removed all at once; its measure starts afresh.
      if (parent.more === node) parent.more = null;
      else parent.measure = measureFor(parent, this.relationOf(parent.relation));
      this.changed(true);
      const next = document.getElementById(`${parent.id}-add-more`);
      if (next) next.focus();
      return;
    }
    parent.children = parent.children.filter((child) => child.id !== node.id);
    this.changed(true);
    const next = document.getElementById(`${parent.id}-add-rule`);
    if (next) next.focus();
  }

  newRule(scope = this.contactScope()) {
    const first = scope.fields[0];
    const preferred = scope.fields.find((f) => f.type === "number") || first;
    return rule(preferred.key, defaultOp(preferred));
  }

  groupAdds(node, scope) {
    // What a group may add: anything at the contact's level; conditions and groups of them
    // over a related row.
    const id = node.id;
    const buttons = [
      button("+ Condition", () => this.add(node, this.newRule(scope)), { id: `${id}-add-rule` }),
    ];
    if (scope.contact) {
      buttons.push(
        button("+ Behaviour", () => this.add(node, behaviour({ name: this.firstActionName() })), {
          id: `${id}-add-behaviour`,
        }),
        button("+ Audience", () => this.add(node, audienceRef(this.firstAudience())), {
          id: `${id}-add-audience`,
        }),
      );
    }
    buttons.push(
      button("+ Group", () => this.add(node, group("OR", [this.newRule(scope)])), {
        id: `${id}-add-group`,
      }),
    );
    return h("div", { class: "adds", role: "group", "aria-label": "Add to this group" }, buttons);
  }

  groupView(node, isRoot, scope = this.contactScope(), title = null) {
    const id = node.id;
    const head = h(
      "div",
      { class: "group-head" },
      label(`${id}-combinator`, title || (isRoot ? "Contacts that match" : "Match"), false),
      select(
        `${id}-combinator`,
        [
          ["AND", "all of these"],
          ["OR", "any of these"],
        ],
        node.combinator,
        (value) => {
          node.combinator = value;
          this.changed(false);
        },
      ),
      h(
        "span",
        { class: "check" },
        h("input", {
          id: `${id}-negated`,
          type: "checkbox",
          class: "control",
          checked: node.negated,
          onchange: (event) => {
            node.negated = event.target.checked;
            this.changed(false);
          },
        }),
        label(`${id}-negated`, "not (none of the group holds)", false),
      ),
      isRoot ? null : button("Remove group", () => this.remove(node), { class: "remove" }),
    );
    const children = h(
      "ol",
      { class: "children" },
      node.children.map((child) => h("li", {}, this.view(child, scope))),
    );
    const adds = this.groupAdds(node, scope);
    return h(
      "fieldset",
      { class: isRoot ? "group root" : "group", id, "data-kind": "group" },
      h("legend", { class: "sr-only", text: isRoot ? "Filter" : "Group" }),
      head,
      h("p", { class: "error", id: `${id}-error`, role: "alert" }),
      children,
      adds,
    );
  }

  anniversaryHint(node, scope) {
    // The year is ignored, the date's own year too: a sign-up anniversary "this week" holds for
    // whoever joined this week. Said under the rule, with a button adding the condition that
    // leaves them out (`before the start of this week`) where the rule's group is "all of".
    if (!scope.contact || node.op !== "anniversary") return [];
    const field = this.fieldOf(node.field, scope);
    const period = node.period;
    const when = period.dir === "this" ? `this ${period.unit}` : "this period";
    const text =
      `The year is ignored, the date's own too: this includes contacts whose ${field.label} ` +
      `itself falls ${when} (a sign-up anniversary holds for whoever joined ${when}).`;
    const hint = [h("p", { class: "help", id: `${node.id}-hint`, text })];
    const parent = parentOf(this.root, node.id);
    if (period.dir === "this" && parent && parent.combinator === "AND" && !parent.negated) {
      hint.push(
        button(`Leave out those of ${when}`, () => this.leaveOutOwnPeriod(parent, node), {
          id: `${node.id}-leave-out`,
          class: "more",
        }),
      );
    }
    return hint;
  }

  leaveOutOwnPeriod(parent, node) {
    // `field < start of this <unit>` beside the anniversary: only earlier dates have one.
    const start = { unit: node.period.unit, offset: "0", zone: node.period.zone };
    const before = rule(node.field, "lt", "", { valueKind: "startOf", start });
    parent.children.splice(parent.children.indexOf(node) + 1, 0, before);
    this.changed(true);
    this.focusFirst(before.id);
  }

  firstActionName() {
    // A new behaviour starts on the list's most frequent action name ("" when it has none).
    const names = this.ctx.actionNames ? this.ctx.actionNames() : [];
    return names.length ? names[0] : "";
  }

  nameHint(node) {
    // A name the list's actions have never carried is allowed (actions to come) but said.
    const names = this.ctx.actionNames ? this.ctx.actionNames() : [];
    const name = node.name.trim();
    return name && names.length && !names.includes(name)
      ? `No action named “${name}” on this list yet: check the spelling, or keep it for actions to come.`
      : "";
  }

  firstAudience() {
    const other = this.ctx.audiences().find((a) => a.id !== this.ctx.currentAudienceId());
    return other ? other.id : "";
  }

  view(node, scope = this.contactScope()) {
    switch (node.kind) {
      case "group":
        return this.groupView(node, false, scope);
      case "rule":
        return this.row(node, this.ruleControls(node, scope), ...this.anniversaryHint(node, scope));
      case "behaviour":
        return this.row(node, this.behaviourControls(node), ...this.behaviourBelow(node));
      case "audience":
        return this.row(node, this.audienceControls(node));
      default:
        return this.row(node, [
          h("span", { class: "raw-note", text: "Written in the text box only:" }),
          h("code", { class: "raw", text: JSON.stringify(node.json) }),
        ]);
    }
  }

  row(node, controls, ...below) {
    return h(
      "div",
      { class: `rule ${node.kind}`, id: node.id, "data-kind": node.kind },
      h("div", { class: "controls" }, controls),
      button("Remove", () => this.remove(node), {
        class: "remove",
        "aria-label": "Remove this condition",
      }),
      h("p", { class: "error", id: `${node.id}-error`, role: "alert" }),
      ...below,
    );
  }

  fieldOf(key, scope = this.contactScope()) {
    return scope.fieldOf(key) || unknownField(key);
  }

  fieldControls(node, scope, name = "Field") {
    const id = node.id;
    const fields = scope.fields.map((f) => [f.key, f.custom ? `${f.label} (custom)` : f.label]);
    if (!fields.some(([key]) => key === node.field)) fields.push([node.field, node.field]);
    return [
      label(`${id}-field`, name),
      select(`${id}-field`, fields, node.field, (value) => {
        node.field = value;
        node.op = defaultOp(this.fieldOf(value, scope));
        node.value = "";
        this.changed(true);
      }),
    ];
  }

  keyControls(node) {
    // One input per key of the path inside a JSON field, so a key may hold a dot
    // (`utm.source`) and still be one key; a key is added or dropped by a button.
    const id = node.id;
    const controls = node.keys.map((key, index) => [
      label(`${id}-path-${index}`, index ? `Key ${index + 1} inside custom data` : "Key inside custom data"),
      input(
        `${id}-path-${index}`,
        key,
        (value) => {
          node.keys[index] = value;
          this.changed(false);
        },
        { placeholder: index ? "key" : "plan", class: "control path" },
      ),
    ]);
    controls.push(
      button("+ key", () => {
        node.keys.push("");
        this.changed(true);
        document.getElementById(`${id}-path-${node.keys.length - 1}`).focus();
      }, { id: `${id}-path-add`, "aria-label": "Add a key one level deeper" }),
    );
    if (node.keys.length > 1) {
      controls.push(
        button("− key", () => {
          node.keys.pop();
          this.changed(true);
        }, { id: `${id}-path-drop`, "aria-label": "Remove the deepest key" }),
      );
    }
    return controls.flat();
  }

  ruleControls(node, scope = this.contactScope(), fieldName = "Field") {
    const id = node.id;
    const field = this.fieldOf(node.field, scope);
    const type = field.type;
    const controls = scope.pick ? this.fieldControls(node, scope, fieldName) : [];
    if (type === "json") controls.push(...this.keyControls(node));
    const ops = operatorsFor(field).map((o) => [o.op, o.label]);
    controls.push(
      label(`${id}-op`, "Operator"),
      select(`${id}-op`, ops, operator(field, node.op).op, (value) => {
        if (value === "anniversary" && node.op !== "anniversary") {
          node.period = { ...ANNIVERSARY_PERIOD, zone: node.period.zone };
        }
        node.op = value;
        this.changed(true);
      }),
    );
    controls.push(...this.valueControls(node, field, scope));
    if (field.insensitive && node.op !== "contains") {
      const kind = operator(field, node.op).input;
      if (kind === "value" || kind === "list") controls.push(this.caseControl(node));
    }
    return controls;
  }

  caseControl(node) {
    return h(
      "span",
      { class: "check" },
      h("input", {
        id: `${node.id}-case`,
        type: "checkbox",
        class: "control",
        checked: node.insensitive,
        onchange: (event) => {
          node.insensitive = event.target.checked;
          this.changed(false);
        },
      }),
      label(`${node.id}-case`, "ignoring case", false),
    );
  }

  valueControls(node, field, scope) {
    const id = node.id;
    const type = field.type;
    const kind = operator(field, node.op).input;
    const set = (value) => {
      node.value = value;
      this.changed(false);
    };
    if (kind === "none") return [];
    if (kind === "period") return this.periodControls(node);
    const kinds = valueKinds(field, node.op).filter((k) => k !== "field" || scope.references);
    const controls = [];
    if (kinds.length > 1) {
      const names = { value: "a value", field: "another field", startOf: "the start of" };
      if (!kinds.includes(node.valueKind)) node.valueKind = "value";
      controls.push(
        label(`${id}-kind`, "Compared with"),
        select(
          `${id}-kind`,
          kinds.map((k) => [k, names[k]]),
          node.valueKind,
          (value) => {
            node.valueKind = value;
            this.changed(true);
          },
        ),
      );
      if (node.valueKind === "field") return [...controls, ...this.refControls(node, field, scope)];
      if (node.valueKind === "startOf") return [...controls, ...this.startControls(node)];
    }
    if (kind === "boolean") {
      if (node.value !== "true" && node.value !== "false") node.value = "true";
      const options = [
        ["true", "true"],
        ["false", "false"],
      ];
      return [label(`${id}-value`, "Value"), select(`${id}-value`, options, node.value, set)];
    }
    const placeholder =
      kind === "list"
        ? "FR, DE"
        : type === "datetime" || type === "date"
          ? "2025-01-31 or 30 days ago"
          : type === "number"
            ? "1000"
            : "value";
    const name = kind === "list" ? "Values, separated by commas" : "Value";
    controls.push(label(`${id}-value`, name), input(`${id}-value`, node.value, set, { placeholder }));
    if (kind === "value" && (type === "date" || type === "datetime")) {
      controls.push(this.datePicker(node));
    }
    return controls;
  }

  datePicker(node) {
    // A native date picker beside the text (which also takes `30 days ago`): the day picked
    // is written into the text as YYYY-MM-DD.
    const id = node.id;
    const day = /^\d{4}-\d{2}-\d{2}$/.test(node.value.trim()) ? node.value.trim() : "";
    return h(
      "span",
      { class: "picker" },
      label(`${id}-date`, "Pick a date"),
      h("input", {
        id: `${id}-date`,
        type: "date",
        class: "control date",
        value: day,
        onchange: (event) => {
          if (!event.target.value) return;
          node.value = event.target.value;
          const text = document.getElementById(`${id}-value`);
          if (text) text.value = node.value;
          this.changed(false);
        },
      }),
    );
  }

  refControls(node, field, scope) {
    // Another field of the same type (`points > referrals`).
    const id = node.id;
    const same = scope.fields.filter(
      (f) => f.type === field.type && f.key !== field.key && !f.custom,
    );
    const options = same.map((f) => [f.key, f.label]);
    if (node.ref && !options.some(([key]) => key === node.ref)) options.push([node.ref, node.ref]);
    if (!options.length) options.push(["", "(no other field of this type)"]);
    if (!node.ref) node.ref = options[0][0];
    return [
      label(`${id}-ref`, "Other field"),
      select(`${id}-ref`, options, node.ref, (value) => {
        node.ref = value;
        this.changed(false);
      }),
    ];
  }

  startControls(node) {
    // The start of this, last or next day, week, month or year (`start of last month`), in
    // an optional zone.
    const id = node.id;
    const start = node.start;
    const offsets = [
      ["-1", "last"],
      ["0", "this"],
      ["1", "next"],
    ];
    const offset = String(start.offset).trim() || "0";
    if (!offsets.some(([value]) => value === offset)) offsets.push([offset, `${offset} ×`]);
    const update = (key) => (value) => {
      start[key] = value;
      this.changed(false);
    };
    return [
      label(`${id}-start-offset`, "Which"),
      select(`${id}-start-offset`, offsets, offset, update("offset")),
      label(`${id}-start-unit`, "Period"),
      select(
        `${id}-start-unit`,
        UNITS.map((u) => [u, u]),
        start.unit,
        update("unit"),
      ),
      label(`${id}-start-zone`, "Time zone (optional)"),
      zoneInput(`${id}-start-zone`, start.zone, update("zone")),
    ];
  }

  periodControls(node) {
    const id = node.id;
    const period = node.period;
    const update = (key, structure) => (value) => {
      period[key] = value;
      this.changed(structure);
    };
    const controls = [
      label(`${id}-dir`, "Period"),
      select(
        `${id}-dir`,
        [
          ["last", "last"],
          ["this", "this"],
          ["next", "next"],
        ],
        period.dir,
        update("dir", true),
      ),
    ];
    if (period.dir !== "this") {
      controls.push(
        label(`${id}-n`, "How many"),
        input(`${id}-n`, period.n, update("n", false), { inputmode: "numeric", class: "control n" }),
      );
    }
    const units = UNITS.map((u) => [u, period.dir === "this" ? u : `${u}s`]);
    controls.push(
      label(`${id}-unit`, "Unit"),
      select(`${id}-unit`, units, period.unit, update("unit", false)),
      label(`${id}-zone`, "Time zone (optional)"),
      zoneInput(`${id}-zone`, period.zone, update("zone", false)),
    );
    return controls;
  }

  behaviourControls(node) {
    // "number of actions ≥ 3 · named share · in the last 30 days · ☐ with an increase": the
    // count's or aggregate's comparison sits with the quantifier it belongs to, in one span
    // that wraps as a whole, never after the increase it has nothing to do with.
    const id = node.id;
    const set = (key, structure) => (value) => {
      node[key] = value;
      this.changed(structure);
    };
    return [
      this.measureControls(node),
      h("span", { class: "named" }, label(`${id}-name`, "named", false), this.nameInput(node)),
      ...this.windowControls(node, set),
      ...this.increaseControls(node, set),
    ];
  }

  nameInput(node) {
    // The action's name, picked from the names the list has seen (the page's datalist) or
    // typed; a name never seen is said under the row.
    const id = node.id;
    return input(`${id}-name`, node.name, (value) => {
      node.name = value;
      const hint = document.getElementById(`${id}-name-hint`);
      if (hint) hint.textContent = this.nameHint(node);
      this.changed(false);
    }, { placeholder: "any action", list: ACTION_NAMES, "aria-describedby": `${id}-name-hint` });
  }

  measureControls(node) {
    // The quantifier and, for a count or an aggregate, the test of its value (`≥ 3`; "Of"
    // `increase` and its test for a sum), drawn as a rule of its one-field scope.
    const id = node.id;
    const quantifier = [
      label(`${id}-quantifier`, "Behaviour"),
      select(`${id}-quantifier`, QUANTIFIERS, node.quantifier, (value) => {
        node.quantifier = value;
        if (measured(value)) node.measure = measureFor(node, this.relationOf(node.relation));
        this.changed(true);
      }),
    ];
    const measure = node.measure;
    const inline = measured(node.quantifier) && measure.kind === "rule";
    const test = inline ? this.ruleControls(measure, this.valuesScope(node), "Of") : [];
    const tested = h("span", { class: "controls" }, test);
    return h("span", { class: "measure", id: inline ? measure.id : null }, quantifier, tested);
  }

  windowControls(node, set) {
    const id = node.id;
    const controls = [
      label(`${id}-window`, "When"),
      select(
        `${id}-window`,
        [
          ["any", "at any time"],
          ["last", "in the last"],
        ],
        node.windowed ? "last" : "any",
        (value) => {
          node.windowed = value === "last";
          this.changed(true);
        },
      ),
    ];
    if (!node.windowed) return controls;
    return [
      ...controls,
      label(`${id}-window-n`, "How many"),
      input(`${id}-window-n`, node.windowN, set("windowN", false), {
        inputmode: "numeric",
        class: "control n",
      }),
      label(`${id}-window-unit`, "Unit"),
      select(
        `${id}-window-unit`,
        UNITS.map((u) => [u, `${u}s`]),
        node.windowUnit,
        set("windowUnit", false),
      ),
    ];
  }

  increaseControls(node, set) {
    // "☐ with an increase ≥ 1": the checkbox and its own comparison, kept together.
    const id = node.id;
    const check = [
      h("input", {
        id: `${id}-increased`,
        type: "checkbox",
        class: "control",
        checked: node.increased,
        onchange: (event) => {
          node.increased = event.target.checked;
          this.changed(true);
        },
      }),
      label(`${id}-increased`, "with an increase", false),
    ];
    if (node.increased) {
      check.push(
        label(`${id}-increase-op`, "Increase comparison"),
        select(`${id}-increase-op`, COMPARE_OPS, node.increaseOp, set("increaseOp", false)),
        label(`${id}-increase`, "Increase"),
        input(`${id}-increase`, node.increaseValue, set("increaseValue", false), {
          inputmode: "decimal",
          class: "control n",
        }),
      );
    }
    return [h("span", { class: "check increase" }, check)];
  }

  behaviourBelow(node) {
    // Under a behaviour's row: the measure's own errors, a measure kept as a group (a negated
    // or two-sided test read from a filter), and the other conditions on the actions.
    const id = node.id;
    const below = [];
    below.push(h("p", { class: "help", id: `${id}-name-hint`, text: this.nameHint(node) }));
    if (measured(node.quantifier) && node.measure.kind === "rule") {
      below.push(h("p", { class: "error", id: `${node.measure.id}-error`, role: "alert" }));
    } else if (measured(node.quantifier)) {
      below.push(this.groupView(node.measure, false, this.valuesScope(node), "Compared: all of"));
    }
    if (node.more) {
      below.push(this.groupView(node.more, false, this.rowsScope(node.relation), "Actions that also match"));
    } else {
      below.push(
        button("+ Other condition on the actions", () => {
          const scope = this.rowsScope(node.relation);
          node.more = group("AND", [this.newRule(scope)], false, "object");
          this.changed(true);
          this.focusFirst(node.more.id);
        }, { id: `${id}-add-more`, class: "more" }),
      );
    }
    return below;
  }

  audienceControls(node) {
    const id = node.id;
    const current = this.ctx.currentAudienceId();
    const options = this.ctx
      .audiences()
      .filter((a) => a.id !== current)
      .map((a) => [a.id, a.name]);
    if (node.audienceId && !options.some(([value]) => value === node.audienceId)) {
      options.push([node.audienceId, node.audienceId]);
    }
    if (!options.length) options.push(["", "(no other audience)"]);
    return [
      label(`${id}-quantifier`, "Membership"),
      select(
        `${id}-quantifier`,
        [
          ["some", "is in audience"],
          ["none", "is not in audience"],
        ],
        node.quantifier,
        (value) => {
          node.quantifier = value;
          this.changed(false);
        },
      ),
      label(`${id}-audience`, "Audience"),
      select(`${id}-audience`, options, node.audienceId, (value) => {
        node.audienceId = value;
        this.changed(false);
      }),
    ];
  }

  showErrors(byNode) {
    // Each problem under the rule it concerns; the rule's controls marked invalid.
    for (const element of this.container.querySelectorAll(".error")) element.textContent = "";
    for (const element of this.container.querySelectorAll(".has-error")) {
      element.classList.remove("has-error");
    }
    for (const element of this.container.querySelectorAll("[aria-invalid]")) {
      element.removeAttribute("aria-invalid");
    }
    for (const [id, messages] of byNode) {
      const node = document.getElementById(id);
      const error = document.getElementById(`${id}-error`);
      if (!node || !error) continue;
      node.classList.add("has-error");
      error.textContent = messages.join(" · ");
      const controls = node.querySelectorAll(":scope > .controls > .control");
      for (const control of controls) {
        control.setAttribute("aria-invalid", "true");
        control.setAttribute("aria-describedby", `${id}-error`);
      }
    }
  }
}
