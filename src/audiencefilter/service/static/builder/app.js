// The audience builder page: pick a list with a private key, open or create an audience,
// build its filter with the rule builder or in the text syntax (each kept in step with the
// other through the service's preview, which answers both canonical forms), preview its
// members, explain one contact, save, and watch the events the change made.

import { ApiError, api, checkKey, forgetKey, storedKey } from "./api.js";
import { fromWhere, group, nodeOfPath, toWhere } from "./model.js";
import { Builder, h } from "./render.js";

const DEBOUNCE_MS = 300;
const LIST_STORAGE = "audiencefilter.builder.listId";
const EVENTS_SHOWN = 30;
const $ = (id) => document.getElementById(id);

const state = {
  client: null,
  listId: null,
  fields: new Map(),
  audiences: [],
  current: null,
  source: "builder",
  paths: new Map(),
  timer: null,
  sequence: 0,
  cursor: null,
  contacts: new Map(),
};

const builder = new Builder($("rules"), {
  fields: [],
  fieldOf: (key) => state.fields.get(key),
  audiences: () => state.audiences,
  currentAudienceId: () => (state.current ? state.current.id : null),
  onChange: () => {
    state.source = "builder";
    schedule();
  },
});

function say(id, text) {
  $(id).textContent = text;
}

// ---- key and list --------------------------------------------------------------------------

async function useKey(key, quiet) {
  say("key-status", "Checking the key…");
  try {
    await checkKey(key);
  } catch (error) {
    say("key-status", quiet ? "" : error.message);
    if (quiet) forgetKey();
    return;
  }
  state.client = api(key);
  say("key-status", `Using the private key ${key.slice(0, 13)}… for this tab.`);
  $("forget-key").hidden = false;
  await loadLists();
}

async function loadLists() {
  const { lists } = await state.client.lists();
  const picker = $("list-select");
  picker.replaceChildren(...lists.map((l) => h("option", { value: l.id, text: l.name })));
  $("list-picker").hidden = false;
  if (!lists.length) {
    say("key-status", "This account has no list yet: create one through the API first.");
    return;
  }
  const remembered = sessionStorage.getItem(LIST_STORAGE);
  picker.value = lists.some((l) => l.id === remembered) ? remembered : lists[0].id;
  await openList(picker.value);
}

async function openList(listId) {
  state.listId = listId;
  sessionStorage.setItem(LIST_STORAGE, listId);
  const [catalogue, contacts] = await Promise.all([
    state.client.fields(listId),
    state.client.contacts(listId),
  ]);
  builder.ctx.fields = catalogue.fields;
  state.fields = new Map(catalogue.fields.map((f) => [f.key, f]));
  state.contacts = new Map(contacts.contacts.map((c) => [c.id, c]));
  renderContactChoice(contacts.contacts);
  $("events").replaceChildren();
  await Promise.all([refreshAudiences(), catchUpEvents()]);
  $("workspace").hidden = false;
  newAudience();
}

function renderContactChoice(contacts) {
  const options = contacts.map((c) => h("option", { value: c.id, text: c.email }));
  $("explain-contact").replaceChildren(h("option", { value: "", text: "Choose a contact" }), ...options);
}

// ---- audiences -----------------------------------------------------------------------------

async function refreshAudiences() {
  const { audiences } = await state.client.audiences(state.listId);
  state.audiences = audiences;
  const items = audiences.map((a) => {
    const current = state.current && state.current.id === a.id;
    const text = `${a.name} (${a.subsCount} ${a.subsCount === 1 ? "member" : "members"})`;
    return h(
      "li",
      {},
      h("button", {
        type: "button",
        class: "audience",
        "data-id": a.id,
        "aria-current": current ? "true" : null,
        onclick: () => openAudience(a.id),
        text,
      }),
    );
  });
  if (!items.length) items.push(h("li", { class: "help", text: "No audience yet." }));
  $("audience-list").replaceChildren(...items);
}

function showEditing() {
  const current = state.current;
  say("editor-title", current ? `Audience “${current.name}”` : "New audience");
  $("rename").disabled = !current;
  $("delete").disabled = !current;
  $("confirm-delete").hidden = true;
  for (const button of document.querySelectorAll("#audience-list button")) {
    const on = current && button.dataset.id === current.id;
    if (on) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

function newAudience() {
  state.current = null;
  $("audience-name").value = "";
  $("filter-text").value = "";
  say("save-status", "");
  builder.set(group());
  showEditing();
  clearPreview("Add a condition to preview.");
}

async function openAudience(id) {
  const { audience } = await state.client.audience(id);
  state.current = audience;
  $("audience-name").value = audience.name;
  $("filter-text").value = audience.filtersText || "";
  say("save-status", audience.mode === "manual" ? "A manual audience: saving makes it smart." : "");
  const where = audience.filters ? JSON.parse(audience.filters) : {};
  builder.set(fromWhere(where, state.fields));
  state.source = "builder";
  showEditing();
  runPreview();
}

async function save() {
  const name = $("audience-name").value.trim();
  const filters = requestFilters();
  if (!name) {
    say("save-status", "Give the audience a name first.");
    $("audience-name").focus();
    return;
  }
  if (!filters) {
    say("save-status", "Add a condition first: a smart audience of everyone is refused.");
    return;
  }
  try {
    const body = { name, mode: "smart", ...filters };
    const data = state.current
      ? await state.client.update(state.current.id, body)
      : await state.client.create({ ...body, listId: state.listId });
    state.current = data.audience;
    say("save-status", `Saved “${name}”.`);
    await afterChange();
  } catch (error) {
    say("save-status", `Not saved: ${error.message}`);
    showProblem(error);
  }
}

async function rename() {
  const name = $("audience-name").value.trim();
  if (!state.current || !name) return;
  try {
    const data = await state.client.update(state.current.id, { name });
    state.current = data.audience;
    say("save-status", `Renamed to “${name}”.`);
    await afterChange();
  } catch (error) {
    say("save-status", `Not renamed: ${error.message}`);
  }
}

function askDelete() {
  if (!state.current) return;
  say("confirm-text", `Delete “${state.current.name}” for good?`);
  $("confirm-delete").hidden = false;
  $("confirm-delete-no").focus();
}

async function confirmDelete() {
  const audience = state.current;
  try {
    await state.client.remove(audience.id);
  } catch (error) {
    say("save-status", `Not deleted: ${error.message}`);
    $("confirm-delete").hidden = true;
    return;
  }
  newAudience();
  say("save-status", `Deleted “${audience.name}”.`);
  await afterChange();
}

async function afterChange() {
  showEditing();
  await Promise.all([refreshAudiences(), refreshEvents()]);
  showEditing();
}

// ---- preview and sync ----------------------------------------------------------------------

function requestFilters() {
  // What the user edited last, as the preview and the save send it: the text, or the
  // builder's where clause (whose node paths are kept to place the library's errors).
  if (state.source === "text") {
    const text = $("filter-text").value;
    return text.trim() ? { filtersText: text } : null;
  }
  const { where, paths } = toWhere(builder.root, state.fields);
  state.paths = paths;
  return where ? { filters: JSON.stringify(where) } : null;
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(runPreview, DEBOUNCE_MS);
}

async function runPreview() {
  clearTimeout(state.timer);
  const sequence = ++state.sequence;
  const filters = requestFilters();
  if (!filters) {
    builder.showErrors(new Map());
    say("text-errors", "");
    if (state.source === "builder") $("filter-text").value = "";
    else builder.set(group());
    clearPreview("Add a condition to preview.");
    return;
  }
  const body = { listId: state.listId, ...filters };
  const explain = $("explain-contact").value;
  if (explain) body.explainContactId = explain;
  say("preview-count", "Counting…");
  try {
    const data = await state.client.preview(body);
    if (sequence === state.sequence) applyPreview(data);
  } catch (error) {
    if (sequence === state.sequence) showProblem(error);
  }
}

function applyPreview(data) {
  builder.showErrors(new Map());
  say("text-errors", "");
  say("preview-status", "");
  if (state.source === "builder") {
    if (document.activeElement !== $("filter-text")) $("filter-text").value = data.filtersText;
  } else {
    builder.set(fromWhere(JSON.parse(data.filters), state.fields));
  }
  const count = $("preview-count");
  count.textContent = `${data.count} ${data.count === 1 ? "contact" : "contacts"}`;
  count.dataset.count = String(data.count);
  $("warnings").replaceChildren(...data.warnings.map((w) => h("li", { text: w.message })));
  renderMembers(data.contacts);
  renderExplanation(data.explanation);
}

function clearPreview(message) {
  const count = $("preview-count");
  count.textContent = message;
  delete count.dataset.count;
  say("preview-status", "");
  $("warnings").replaceChildren();
  renderMembers([]);
  renderExplanation(null);
}

function detailText(detail) {
  return detail.suggestion ? `${detail.message} (${detail.suggestion})` : detail.message;
}

function showProblem(error) {
  // The library's problems at the rules they concern (builder) or by line and column (text);
  // any other refusal as the service's message.
  if (!(error instanceof ApiError)) {
    say("preview-status", String(error.message || error));
    return;
  }
  clearPreview("No preview while the filter has a problem.");
  if (error.status === 404 && error.message === "Contact not found") {
    $("explain-contact").value = "";
    schedule();
    return;
  }
  if (!error.details.length) {
    say("preview-status", error.message);
    return;
  }
  if (state.source === "text") {
    say("text-errors", error.details.map(textProblem).join("\n"));
    return;
  }
  const byNode = new Map();
  for (const detail of error.details) {
    const id = nodeOfPath(state.paths, detail.path || "") || builder.root.id;
    byNode.set(id, [...(byNode.get(id) || []), detailText(detail)]);
  }
  builder.showErrors(byNode);
}

function textProblem(detail) {
  const where = detail.line ? `Line ${detail.line}, column ${detail.column}: ` : "";
  return where + detailText(detail);
}

function renderMembers(contacts) {
  const rows = contacts.map((c) =>
    h(
      "tr",
      {},
      h("td", { text: c.email }),
      h("td", { text: [c.firstName, c.lastName].filter(Boolean).join(" ") }),
      h("td", { text: String(c.points) }),
      h("td", { text: c.country || "" }),
    ),
  );
  $("members").querySelector("tbody").replaceChildren(...rows);
}

const MARKS = { TRUE: "✓", FALSE: "✗", UNKNOWN: "?" };

function explanationItem(node) {
  const seen = node.seen ? ` (${node.seen})` : "";
  return h(
    "li",
    { class: `outcome-${node.outcome.toLowerCase()}` },
    h("span", { class: "mark", "aria-hidden": "true", text: MARKS[node.outcome] }),
    h("span", { class: "outcome", text: node.outcome }),
    ` ${node.label}${seen}`,
    node.children ? h("ul", {}, node.children.map(explanationItem)) : null,
  );
}

function renderExplanation(explanation) {
  const target = $("explanation");
  if (!explanation) {
    target.replaceChildren();
    return;
  }
  const contact = state.contacts.get(explanation.contactId);
  const who = contact ? contact.email : explanation.contactId;
  const verdict = explanation.outcome === "TRUE" ? "is in the audience" : "is not in the audience";
  target.replaceChildren(
    h("p", { class: "verdict", text: `${who} ${verdict}.` }),
    h("ul", { class: "explanation" }, explanationItem(explanation)),
  );
}

// ---- activity ------------------------------------------------------------------------------

async function catchUpEvents() {
  // The feed is read from the list's current end: the panel shows what this page changes.
  let after = null;
  for (;;) {
    const page = await state.client.events(state.listId, after);
    after = page.next;
    if (!page.hasMore) break;
  }
  state.cursor = after;
}

async function refreshEvents() {
  const fresh = [];
  for (;;) {
    const page = await state.client.events(state.listId, state.cursor);
    state.cursor = page.next;
    fresh.push(...page.events);
    if (!page.hasMore) break;
  }
  const list = $("events");
  for (const event of fresh) list.prepend(eventItem(event));
  while (list.children.length > EVENTS_SHOWN) list.lastElementChild.remove();
}

function eventItem(event) {
  const time = new Date(event.occurredAt).toLocaleTimeString();
  let subject = "";
  if (event.type.startsWith("audience.") && event.data && event.data.audience) {
    const contact = state.contacts.get(event.contactId);
    subject = `${contact ? contact.email : event.contactId} · ${event.data.audience.name}`;
  } else if (event.data && event.data.name) {
    subject = event.data.name;
  } else if (event.contactId) {
    subject = event.contactId;
  }
  return h(
    "li",
    { "data-type": event.type },
    h("time", { datetime: event.occurredAt, text: time }),
    " ",
    h("strong", { text: event.type }),
    ` ${subject}`,
  );
}

// ---- wiring --------------------------------------------------------------------------------

function wire() {
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("api-key");
    const key = input.value.trim();
    input.value = "";
    if (key) useKey(key, false);
  });
  $("forget-key").addEventListener("click", () => {
    forgetKey();
    sessionStorage.removeItem(LIST_STORAGE);
    window.location.reload();
  });
  $("list-select").addEventListener("change", (event) => openList(event.target.value));
  $("new-audience").addEventListener("click", () => {
    newAudience();
    $("audience-name").focus();
  });
  $("save").addEventListener("click", save);
  $("rename").addEventListener("click", rename);
  $("delete").addEventListener("click", askDelete);
  $("confirm-delete-yes").addEventListener("click", confirmDelete);
  $("confirm-delete-no").addEventListener("click", () => {
    $("confirm-delete").hidden = true;
    $("delete").focus();
  });
  $("filter-text").addEventListener("input", () => {
    state.source = "text";
    schedule();
  });
  $("explain-contact").addEventListener("change", runPreview);
}

wire();
const remembered = storedKey();
if (remembered) useKey(remembered, true);
