// The audience builder page: pick a list with a private key, open or create an audience,
// build its filter with the rule builder or in the text syntax (each kept in step with the
// other through the service's preview, which answers both canonical forms), preview its
// members, explain one contact, save, and watch the events the change made. An audience the
// service builds in the background (a large list) shows its progress until it is built.

import { ApiError, api, checkKey, forgetKey, storedKey } from "./api.js";
import {
  buildText,
  building,
  fromWhere,
  group,
  nodeOfPath,
  problems,
  relationsOf,
  snapshot,
  toWhere,
} from "./model.js";
import { columnsOf, shownValue } from "./columns.js";
import { Builder, h } from "./render.js";
import { Analysis } from "./analysis.js";
import { caretLine, unfinished } from "./text_checks.js";
import { lineDiff, versionLabel, versionLines } from "./versions.js";
import { namedText } from "./names.js";
import { download, erasureText, fileName, sizeText } from "./records.js";

const DEBOUNCE_MS = 300;
const TEXT_DEBOUNCE_MS = 800; // the text box waits longer: half-typed text is rarely a filter
const SEARCH_SHOWN = 8;
const HISTORY_KEPT = 100;
const LIST_STORAGE = "audiencefilter.builder.listId";
const EVENTS_SHOWN = 30;
const BUILD_POLL_MS = 1500; // how often a background build's progress is asked for
const $ = (id) => document.getElementById(id);

const state = {
  client: null,
  listId: null,
  fields: new Map(),
  relations: new Map(), // each relation's fields and aggregates (model.js `relationsOf`)
  audiences: [],
  current: null,
  source: "builder",
  paths: new Map(),
  timer: null,
  sequence: 0,
  inflight: null,
  cursor: null,
  emails: new Map(),
  zones: new Set(),
  explained: null,
  searchTimer: null,
  searchSequence: 0,
  history: [],
  lastEdit: null,
  build: null, // the background build followed: { id, timer }
  actionNames: [], // the names the list's actions carry, most frequent first
};

const analysis = new Analysis({
  client: () => state.client,
  listId: () => state.listId,
  // The list's other smart audiences: those a draft can be the same as, or contained in.
  others: () =>
    state.audiences.filter((a) => a.mode !== "manual" && !(state.current && a.id === state.current.id)),
  estimate: $("estimate"),
  warnings: $("algebra-warnings"),
});

const builder = new Builder($("rules"), {
  fields: [],
  fieldOf: (key) => state.fields.get(key),
  relations: new Map(),
  audiences: () => state.audiences,
  actionNames: () => state.actionNames,
  currentAudienceId: () => (state.current ? state.current.id : null),
  onChange: (structure) => {
    state.source = "builder";
    remember(structure);
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
  stopBuild();
  state.listId = listId;
  sessionStorage.setItem(LIST_STORAGE, listId);
  const catalogue = await state.client.fields(listId);
  builder.ctx.fields = catalogue.fields;
  state.fields = new Map(catalogue.fields.map((f) => [f.key, f]));
  state.relations = relationsOf(catalogue);
  builder.ctx.relations = state.relations;
  // The zone inputs pick from the library's list (the catalogue's `timeZones`).
  const zones = catalogue.timeZones || [];
  state.zones = new Set(zones);
  $("time-zones").replaceChildren(...zones.map((zone) => h("option", { value: zone })));
  await loadActionNames(listId);
  const zone = catalogue.defaultTimeZone || "UTC";
  say("list-zone", `Time zone: ${zone} (calendar rules naming no zone are read in it)`);
  state.emails = new Map();
  forgetExplained();
  $("events").replaceChildren();
  await Promise.all([refreshAudiences(), catchUpEvents()]);
  $("workspace").hidden = false;
  newAudience();
}

async function loadActionNames(listId) {
  // The names the list's actions carry, offered by each behaviour's name input (a datalist):
  // picked rather than typed, while a name not seen yet may still be typed.
  let names = [];
  try {
    names = (await state.client.actionNames(listId)).names.map((n) => n.name);
  } catch {
    names = []; // the pick-list is a help: without it the name is typed
  }
  state.actionNames = names;
  $("action-names").replaceChildren(...names.map((name) => h("option", { value: name })));
}

// ---- contacts by e-mail --------------------------------------------------------------------

function emailNode(email) {
  // An e-mail that wraps only after its "@" or a dot, never inside a word.
  const parts = String(email).split(/(?<=[@.])/);
  const children = [];
  parts.forEach((part, index) => {
    if (index) children.push(h("wbr"));
    children.push(part);
  });
  return h("span", { class: "email" }, ...children);
}

async function emailOf(id) {
  // The e-mail of a contact id (events and explanations carry ids), asked once per id; null
  // for a contact that is gone.
  if (!state.emails.has(id)) {
    const asked = state.client
      .contact(id)
      .then((data) => data.contact.email)
      .catch(() => null);
    state.emails.set(id, asked);
  }
  return state.emails.get(id);
}

function knowEmails(contacts) {
  for (const contact of contacts) state.emails.set(contact.id, Promise.resolve(contact.email));
}

async function knowEmailsOf(ids) {
  // The e-mails of these contacts, those not known yet asked in one request; a contact gone
  // is remembered as such (null), so it is never asked for one by one.
  const unknown = [...new Set(ids)].filter((id) => !state.emails.has(id));
  if (!unknown.length) return;
  const found = await state.client.contactsByIds(state.listId, unknown).catch(() => null);
  if (!found) return;
  knowEmails(found.contacts);
  for (const id of unknown) if (!state.emails.has(id)) state.emails.set(id, Promise.resolve(null));
}

function contactLabel(id) {
  // A span showing the contact's e-mail (its id until the e-mail is known).
  const span = h("span", { class: "contact", "data-contact": id, text: id });
  emailOf(id).then((email) => {
    if (email) span.replaceChildren(emailNode(email));
  });
  return span;
}

function scheduleSearch() {
  clearTimeout(state.searchTimer);
  state.searchTimer = setTimeout(runSearch, DEBOUNCE_MS);
}

async function runSearch() {
  clearTimeout(state.searchTimer);
  const text = $("explain-search").value.trim();
  const sequence = ++state.searchSequence;
  const results = $("explain-results");
  if (!text || (state.explained && text === state.explained.email)) {
    results.replaceChildren();
    return;
  }
  let found;
  try {
    found = await state.client.searchContacts(state.listId, text, SEARCH_SHOWN);
  } catch (error) {
    if (sequence === state.searchSequence) {
      results.replaceChildren(h("li", { class: "help", text: error.message }));
    }
    return;
  }
  if (sequence !== state.searchSequence) return;
  knowEmails(found.contacts);
  const items = found.contacts.map((contact) =>
    h(
      "li",
      {},
      h(
        "button",
        {
          type: "button",
          class: "result",
          "data-id": contact.id,
          onclick: () => explainContact(contact),
        },
        emailNode(contact.email),
      ),
    ),
  );
  if (!items.length) {
    items.push(h("li", { class: "help", text: `No contact's e-mail contains “${text}”.` }));
  }
  results.replaceChildren(...items);
}

function explainContact(contact) {
  state.explained = { id: contact.id, email: contact.email };
  $("erase-area").hidden = false;
  $("confirm-erase").hidden = true;
  say("erase-status", "");
  $("explain-search").value = contact.email;
  $("explain-results").replaceChildren();
  runPreview();
}

function forgetExplained() {
  state.explained = null;
  $("erase-area").hidden = true;
  $("explain-search").value = "";
  $("explain-results").replaceChildren();
}

// ---- undo ----------------------------------------------------------------------------------

function resetHistory() {
  state.history = [snapshot(builder.root)];
  state.lastEdit = null;
  $("undo").disabled = true;
}

function remember(structure) {
  // One step per change of structure, and one per run of typing in the same control.
  const focused = document.activeElement ? document.activeElement.id : "";
  const typing = !structure && focused !== "" && focused === state.lastEdit;
  const entry = snapshot(builder.root);
  if (typing && state.history.length > 1) state.history[state.history.length - 1] = entry;
  else state.history.push(entry);
  if (state.history.length > HISTORY_KEPT) state.history.shift();
  state.lastEdit = structure ? null : focused;
  $("undo").disabled = state.history.length < 2;
}

function undo() {
  if (state.history.length < 2) return;
  state.history.pop();
  builder.set(snapshot(state.history[state.history.length - 1]));
  state.lastEdit = null;
  state.source = "builder";
  $("undo").disabled = state.history.length < 2;
  say("save-status", "Undone.");
  analyse();
  runPreview();
}

// ---- audiences -----------------------------------------------------------------------------

async function refreshAudiences() {
  const { audiences } = await state.client.audiences(state.listId);
  state.audiences = audiences;
  const items = audiences.map((a) => {
    const current = state.current && state.current.id === a.id;
    const size = building(a)
      ? "building…"
      : `${a.subsCount} ${a.subsCount === 1 ? "member" : "members"}`;
    const text = `${a.name} (${size})`;
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
  $("export").disabled = !current;
  $("confirm-delete").hidden = true;
  for (const button of document.querySelectorAll("#audience-list button")) {
    const on = current && button.dataset.id === current.id;
    if (on) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

function newAudience() {
  stopBuild();
  state.current = null;
  $("audience-name").value = "";
  $("filter-text").value = "";
  say("save-status", "");
  builder.set(group());
  resetHistory();
  showEditing();
  analysis.clear();
  clearPreview("Add a condition to preview.");
  loadVersions();
}

async function openAudience(id) {
  stopBuild();
  const { audience } = await state.client.audience(id);
  state.current = audience;
  $("audience-name").value = audience.name;
  $("filter-text").value = namedText(audience.filtersText || "", state.audiences);
  say("save-status", audience.mode === "manual" ? "A manual audience: saving makes it smart." : "");
  const where = audience.filters ? JSON.parse(audience.filters) : {};
  builder.set(fromWhere(where, state.fields, state.relations));
  resetHistory();
  state.source = "builder";
  showEditing();
  followBuild(audience);
  analyse();
  runPreview();
  loadVersions();
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
    const later = building(data.audience) ? ": building its members in the background." : ".";
    say("save-status", `Saved “${name}”${later}`);
    followBuild(data.audience);
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
    followBuild(data.audience);
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

// ---- export and erase ----------------------------------------------------------------------

async function exportAudience() {
  // The saved audience's members as CSV, downloaded under the audience's name.
  const audience = state.current;
  if (!audience) return;
  say("export-status", "Exporting…");
  try {
    const { blob, filename } = await state.client.exportCsv(audience.id, $("export-bom").checked);
    const name = fileName(audience.name, filename);
    download(blob, name);
    say("export-status", `Downloaded ${name} (${sizeText(blob.size)}).`);
  } catch (error) {
    say("export-status", `Not exported: ${error.message}`);
  }
}

function askErase() {
  if (!state.explained) return;
  say("confirm-erase-text", `Erase ${state.explained.email} for good? The contact is deleted, its ` +
    "e-mail removed from the events that named it, and the list refuses it from now on.");
  $("confirm-erase").hidden = false;
  $("confirm-erase-no").focus();
}

async function confirmErase() {
  const contact = state.explained;
  $("confirm-erase").hidden = true;
  try {
    const { erasure } = await state.client.erase(state.listId, contact.id);
    say("erase-status", erasureText(contact.email, erasure));
  } catch (error) {
    say("erase-status", `Not erased: ${error.message}`);
    return;
  }
  forgetExplained();
  state.emails.set(contact.id, Promise.resolve(null));
  runPreview();
  await afterChange(); // member counts and the activity panel (contact.deleted, .erased)
}

// ---- background builds ---------------------------------------------------------------------

function followBuild(audience) {
  // An audience answered `building` (a large list): its progress is shown and asked for again
  // every BUILD_POLL_MS until it is built. Opening another audience, starting a new one,
  // another list or a delete stops following it; an answer about a build no longer followed
  // is dropped.
  stopBuild();
  if (!building(audience)) return;
  const build = { id: audience.id, timer: null };
  state.build = build;
  showBuild(audience.progress);
  build.timer = setTimeout(() => pollBuild(build), BUILD_POLL_MS);
}

function stopBuild() {
  if (state.build) clearTimeout(state.build.timer);
  state.build = null;
  $("build").hidden = true;
  say("build-status", "");
}

function showBuild(progress) {
  const bar = $("build-progress");
  if (progress) {
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done;
  } else {
    bar.removeAttribute("value"); // indeterminate
  }
  say("build-status", buildText(progress));
  $("build").hidden = false;
}

async function pollBuild(build) {
  let data;
  try {
    data = await state.client.audience(build.id);
  } catch (error) {
    if (state.build !== build) return;
    if (error.status === 404) {
      stopBuild();
      say("save-status", "The audience is gone: it was deleted elsewhere.");
      await refreshAudiences();
      return;
    }
    // Anything else (the service restarting, the network) is asked again later.
    say("build-status", `${buildText(null)} (not answered: ${error.message}; asking again)`);
    build.timer = setTimeout(() => pollBuild(build), BUILD_POLL_MS);
    return;
  }
  if (state.build !== build) return; // superseded: another audience is open now
  const { audience } = data;
  if (building(audience)) {
    showBuild(audience.progress);
    build.timer = setTimeout(() => pollBuild(build), BUILD_POLL_MS);
    return;
  }
  stopBuild();
  if (state.current && state.current.id === audience.id) state.current = audience;
  // The members are paged (`?limit=1`): their number is the pagination's total.
  const size = data.pagination ? data.pagination.total : audience.subs.length;
  const members = `${size} ${size === 1 ? "member" : "members"}`;
  say("save-status", `Built “${audience.name}”: ${members}.`);
  await afterChange();
}

async function afterChange() {
  showEditing();
  await Promise.all([refreshAudiences(), refreshEvents(), loadVersions()]);
  showEditing();
}

// ---- versions ------------------------------------------------------------------------------

async function loadVersions() {
  // The open audience's versions, newest first, and the difference of the last change.
  const current = state.current;
  $("versions-panel").hidden = !current;
  if (!current) return;
  const { versions } = await state.client.versions(current.id);
  if (!state.current || state.current.id !== current.id) return;
  state.versions = versions;
  $("versions").replaceChildren(
    ...versions.map((v) => h("li", { text: `${versionLabel(v)}: ${namedText(v.filtersText, state.audiences) || "(no filter)"}` })),
  );
  const options = () => versions.map((v) => h("option", { value: String(v.number), text: `v${v.number}` }));
  $("diff-from").replaceChildren(...options());
  $("diff-to").replaceChildren(...options());
  $("diff-from").value = String((versions[1] || versions[0]).number);
  $("diff-to").value = String(versions[0].number);
  showDiff();
}

function showDiff() {
  // The lines of the first version taken out (-) and those of the second put in (+).
  const pick = (id) => state.versions.find((v) => String(v.number) === $(id).value);
  const before = pick("diff-from");
  const after = pick("diff-to");
  if (!before || !after) return;
  const marks = { " ": "same", "-": "out", "+": "in" };
  $("version-diff").replaceChildren(
    ...lineDiff(versionLines(before), versionLines(after)).map(({ mark, line }) =>
      h("span", { class: marks[mark], text: `${mark} ${line}\n` }),
    ),
  );
  $("restore").textContent = `Restore v${before.number}`;
}

async function restoreVersion() {
  const number = $("diff-from").value;
  if (!state.current || !number) return;
  try {
    const data = await state.client.restore(state.current.id, number);
    say("versions-status", `Restored v${number} as a new version.`);
    await openAudience(data.audience.id);
    await afterChange();
  } catch (error) {
    say("versions-status", `Not restored: ${error.message}`);
  }
}

// ---- preview and sync ----------------------------------------------------------------------

function requestFilters() {
  // What the user edited last, as the preview and the save send it: the text, or the
  // builder's where clause (whose node paths are kept to place the library's errors).
  if (state.source === "text") {
    const text = $("filter-text").value;
    return text.trim() ? { filtersText: text } : null;
  }
  const { where, paths } = toWhere(builder.root, state.fields, state.relations);
  state.paths = paths;
  return where ? { filters: JSON.stringify(where) } : null;
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(runPreview, state.source === "text" ? TEXT_DEBOUNCE_MS : DEBOUNCE_MS);
  analyse();
}

function analyse() {
  // The estimate and the warnings follow the typing (analysis.js), but only for a filter the
  // page cannot already tell is unfinished: no request answered 400 per keystroke.
  const unready =
    state.source === "text"
      ? unfinished($("filter-text").value)
      : problems(builder.root, state.fields, state.zones, state.relations).size;
  analysis.schedule(unready ? null : requestFilters());
}

function setCount(text, count, filtersText) {
  // The count carries the filter it counts (`data-filters-text`, as the service read it), so
  // whoever reads it (a test, a screen reader's user) can tell a count of the filter on screen
  // from one of a filter typed a moment before.
  const element = $("preview-count");
  element.textContent = text;
  if (count === undefined) delete element.dataset.count;
  else element.dataset.count = String(count);
  if (filtersText === undefined) delete element.dataset.filtersText;
  else element.dataset.filtersText = filtersText;
  say("jump-count", count === undefined ? text : text.toLowerCase());
}

async function runPreview() {
  // Waits for typing to pause (`schedule`), asks nothing the page can already tell is
  // unfinished (`problems`), and aborts the request it supersedes: no 400 per keystroke,
  // and an older answer never replaces a newer one.
  clearTimeout(state.timer);
  const sequence = ++state.sequence;
  if (state.inflight) state.inflight.abort();
  state.inflight = null;
  const filters = requestFilters();
  if (!filters) {
    builder.showErrors(new Map());
    showTextProblem("");
    if (state.source === "builder") $("filter-text").value = "";
    else builder.set(group());
    clearPreview("Add a condition to preview.");
    return;
  }
  if (state.source === "text" && textUnfinished()) return;
  if (state.source === "builder") {
    const found = problems(builder.root, state.fields, state.zones, state.relations);
    if (found.size) {
      showTextProblem("");
      clearPreview("No preview while a rule is unfinished.");
      builder.showErrors(found);
      return;
    }
  }
  const body = { listId: state.listId, ...filters };
  if (state.explained) body.explainContactId = state.explained.id;
  setCount("Counting…");
  const controller = new AbortController();
  state.inflight = controller;
  try {
    const data = await state.client.preview(body, controller.signal);
    if (sequence === state.sequence) applyPreview(data);
  } catch (error) {
    if (error.name !== "AbortError" && sequence === state.sequence) showProblem(error);
  } finally {
    if (state.inflight === controller) state.inflight = null;
  }
}

function textUnfinished() {
  // Half-typed text (an open quote, a trailing `>=`) is said in place, and nothing is asked.
  const why = unfinished($("filter-text").value);
  if (!why) return false;
  showTextProblem(`Unfinished: ${why}.`);
  clearPreview("No preview while the text is unfinished.");
  return true;
}

function showTextProblem(message) {
  say("text-errors", message);
  if (message) $("filter-text").setAttribute("aria-invalid", "true");
  else $("filter-text").removeAttribute("aria-invalid");
}

function applyPreview(data) {
  builder.showErrors(new Map());
  showTextProblem("");
  say("preview-status", "");
  if (state.source === "builder") {
    if (document.activeElement !== $("filter-text")) {
      $("filter-text").value = namedText(data.filtersText, state.audiences);
    }
  } else {
    builder.set(fromWhere(JSON.parse(data.filters), state.fields, state.relations));
    remember(true);
  }
  setCount(
    `${data.count} ${data.count === 1 ? "contact" : "contacts"}`,
    data.count,
    data.filtersText,
  );
  $("warnings").replaceChildren(...data.warnings.map((w) => h("li", { text: w.message })));
  renderMembers(data.contacts);
  renderExplanation(data.explanation);
}

function clearPreview(message) {
  setCount(message);
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
    forgetExplained();
    schedule();
    return;
  }
  if (!error.details.length) {
    say("preview-status", error.message);
    return;
  }
  if (state.source === "text") {
    showTextProblem(error.details.map(textProblem).join("\n"));
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
  // "Line 1, column 11: ..." and, under it, the line with a caret at the column.
  const where = detail.line ? `Line ${detail.line}, column ${detail.column}: ` : "";
  const caret = detail.line ? caretLine($("filter-text").value, detail.line, detail.column) : "";
  return where + detailText(detail) + (caret ? `\n${caret}` : "");
}

function renderMembers(contacts) {
  // E-mail, then the fields the filter reads (`columns.js`), so the table shows why each
  // member is in; the name when it reads none of the contact's own fields.
  knowEmails(contacts);
  const columns = columnsOf(builder.root, state.fields);
  const head = [h("th", { scope: "col", text: "Email" })];
  head.push(...columns.map((c) => h("th", { scope: "col", "data-key": c.key, text: c.label })));
  $("members").querySelector("thead").replaceChildren(h("tr", {}, head));
  const rows = contacts.map((c) =>
    h(
      "tr",
      {},
      h("td", { class: "email-cell" }, emailNode(c.email)),
      columns.map((column) => h("td", { text: shownValue(column.read(c)) })),
    ),
  );
  $("members").querySelector("tbody").replaceChildren(...rows);
}

const MARKS = { TRUE: "✓", FALSE: "✗", UNKNOWN: "?" };

function explanationItem(node) {
  // The value seen in the list's words (field labels, actions by name), as the service says.
  const said = node.words || node.seen;
  const seen = said ? ` (${said})` : "";
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
  const known = state.explained && state.explained.id === explanation.contactId;
  const who = known ? emailNode(state.explained.email) : contactLabel(explanation.contactId);
  const verdict = explanation.outcome === "TRUE" ? "is in the audience" : "is not in the audience";
  target.replaceChildren(
    h("p", { class: "verdict" }, who, ` ${verdict}.`),
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
  // Only the newest events the panel shows are drawn, and the e-mails of their contacts are
  // asked in one request: a save that adds 1,500 members must not ask for 1,500 of them.
  const shown = fresh.slice(-EVENTS_SHOWN);
  await knowEmailsOf(shown.map((event) => event.contactId).filter(Boolean));
  for (const event of shown) list.prepend(eventItem(event));
  while (list.children.length > EVENTS_SHOWN) list.lastElementChild.remove();
}

function eventItem(event) {
  const time = new Date(event.occurredAt).toLocaleTimeString();
  // Contacts by e-mail, never by id: the page asks for the e-mails of ids it does not know.
  let subject = [];
  if (event.type.startsWith("audience.") && event.data && event.data.audience) {
    subject = event.contactId
      ? [contactLabel(event.contactId), ` · ${event.data.audience.name}`]
      : [event.data.audience.name];
  } else if (event.data && event.data.name) {
    subject = [event.data.name];
  } else if (event.contactId) {
    subject = [contactLabel(event.contactId)];
  }
  return h(
    "li",
    { "data-type": event.type },
    h("time", { datetime: event.occurredAt, text: time }),
    " ",
    h("strong", { text: event.type }),
    " ",
    ...subject,
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
  $("export").addEventListener("click", exportAudience);
  $("erase").addEventListener("click", askErase);
  $("confirm-erase-yes").addEventListener("click", confirmErase);
  $("confirm-erase-no").addEventListener("click", () => {
    $("confirm-erase").hidden = true;
    $("erase").focus();
  });
  $("filter-text").addEventListener("input", () => {
    // Waits for a pause in typing (`schedule`): one request per pause, never per key.
    state.source = "text";
    clearTimeout(state.timer);
    schedule();
  });
  $("explain-search").addEventListener("input", scheduleSearch);
  $("explain-search").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    const first = $("explain-results").querySelector("button.result");
    if (first) first.click();
    else runSearch();
  });
  $("undo").addEventListener("click", undo);
  $("diff-from").addEventListener("change", showDiff);
  $("diff-to").addEventListener("change", showDiff);
  $("restore").addEventListener("click", restoreVersion);
  document.addEventListener("keydown", (event) => {
    // Ctrl+Z (Cmd+Z) undoes a change of the rules, except in a text field, whose own undo
    // undoes typing.
    const typing = event.target.closest && event.target.closest('input:not([type="checkbox"]), textarea');
    const z = event.key === "z" || event.key === "Z";
    if (z && (event.ctrlKey || event.metaKey) && !event.shiftKey && !typing) {
      event.preventDefault();
      undo();
    }
  });
}

wire();
const remembered = storedKey();
if (remembered) useKey(remembered, true);
