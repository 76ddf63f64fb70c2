// While a filter is edited: its estimated size as the user types, and what the service's
// compare proves of it, before anything is saved. The estimate comes from the sample kept
// with the list (fast at any size), so it can follow every pause of a few keys; the exact
// count is the preview's, asked when typing pauses longer (app.js). The warnings are proofs
// (the library's `compare` and `can_match`): the filter can never match (naming the
// conditions to blame), it is the same as another audience of the list, or contained in one,
// each with example contacts the service made up and checked against both filters.

import { h } from "./render.js";

export const ESTIMATE_MS = 120; // shorter than the preview's pause: the estimate is cheap
const COMPARED = 20; // the other audiences a draft is compared with, at most

export class Analysis {
  // `view`: { client(), listId(), others() (the other smart audiences of the list),
  // estimate (element), warnings (element) }.
  constructor(view) {
    this.view = view;
    this.timer = null;
    this.sequence = 0;
  }

  schedule(filters) {
    // The last request wins: an answer to an older filter is dropped.
    clearTimeout(this.timer);
    const sequence = ++this.sequence;
    if (!filters) {
      showEstimate(this.view.estimate, null);
      this.showWarnings([]);
      return;
    }
    this.timer = setTimeout(() => this.run(filters, sequence), ESTIMATE_MS);
  }

  clear() {
    this.schedule(null);
  }

  run(filters, sequence) {
    const current = () => sequence === this.sequence;
    const client = this.view.client();
    const body = { listId: this.view.listId(), ...filters };
    client
      .estimate(body)
      .then((data) => current() && showEstimate(this.view.estimate, data))
      .catch(() => current() && showEstimate(this.view.estimate, null));
    this.compareAll(client, filters).then((warnings) => current() && this.showWarnings(warnings));
  }

  async compareAll(client, filters) {
    // The draft against each other audience; with none, against itself (for `canMatch`).
    const listId = this.view.listId();
    const others = this.view.others().slice(0, COMPARED);
    const asked = (others.length ? others : [null]).map((other) => {
      const b = other ? { audienceId: other.id } : filters;
      return client.compare({ listId, a: filters, b }).then(
        (answer) => ({ other, answer }),
        () => null,
      );
    });
    return warningsOf((await Promise.all(asked)).filter(Boolean));
  }

  showWarnings(warnings) {
    this.view.warnings.replaceChildren(...warnings.map(warningItem));
  }
}

function showEstimate(element, data) {
  if (!data) {
    element.textContent = "";
    delete element.dataset.estimate;
    return;
  }
  const n = (value) => value.toLocaleString("en");
  const exact = data.sampleSize >= data.listSize;
  element.textContent = exact
    ? `Estimate: ${n(data.estimate)} (the whole list was judged)`
    : `Estimate: about ${n(data.estimate)} (95 % between ${n(data.low)} and ${n(data.high)})`;
  element.dataset.estimate = String(data.estimate);
  element.dataset.low = String(data.low);
  element.dataset.high = String(data.high);
}

export function warningsOf(compared) {
  // "Can never match" says it all: an empty filter is the same as, and contained in, any
  // other empty one, which would only repeat it.
  if (!compared.length) return [];
  const never = compared[0].answer.canMatch.a;
  if (never.holds === false) return [neverWarning(never.reason)];
  return compared.filter(({ other }) => other).flatMap(relationWarning);
}

function neverWarning(reason) {
  const blamed = /\(([^()]*)\)\s*$/.exec(reason);
  const text = blamed
    ? `Can never match: these conditions cannot hold together: ${blamed[1]}.`
    : `Can never match: ${reason}.`;
  return { kind: "never", text, examples: [] };
}

function relationWarning({ other, answer }) {
  const { both, bOnly } = answer.witnesses;
  if (answer.relation === "equivalent") {
    const text = `The same as “${other.name}”: every contact it selects, that audience selects, and the other way round.`;
    return [{ kind: "same", other: other.id, text, examples: [["In both", both]] }];
  }
  if (answer.relation === "subset") {
    const text = `Contained in “${other.name}”: every contact it selects is already in that audience.`;
    const examples = [
      ["In both", both],
      [`Only in “${other.name}”`, bOnly],
    ];
    return [{ kind: "within", other: other.id, text, examples }];
  }
  return [];
}

function warningItem(warning) {
  const examples = warning.examples
    .filter(([, record]) => record)
    .map(([label, record]) =>
      h("li", { class: "example" }, h("span", { class: "example-label", text: `${label}: ` }), recordText(record)),
    );
  const list = examples.length
    ? [h("p", { class: "help", text: "Example contacts:" }), h("ul", { class: "examples" }, ...examples)]
    : [];
  return h(
    "li",
    { class: `warning warning-${warning.kind}`, "data-kind": warning.kind, "data-other": warning.other || null },
    h("p", { text: warning.text }),
    ...list,
  );
}

export function recordText(record) {
  // A made-up contact as "key: value" pairs, nested values as JSON.
  const shown = (value) => (typeof value === "string" ? value : JSON.stringify(value));
  const pairs = Object.entries(record).map(([key, value]) => `${key}: ${shown(value)}`);
  return h("code", { text: pairs.length ? pairs.join(", ") : "any contact" });
}
