// The builder's CSV upload: pick a file, say which field each column fills (or leave it out),
// check it with the service's dry run (the first rows as they would be stored, every bad cell
// named), then import it, the progress streamed by the service after each thousand rows.
// It uses the key and the list the builder page chose, and `POST /v4/contacts/import` only.

import { storedKey } from "./api.js";

const LIST_STORAGE = "audiencefilter.builder.listId";
const HEADER_BYTES = 1 << 16; // the header row is read from the file's first 64 KiB
const PROBLEMS_SHOWN = 50;
const CONTACT_FIELDS = [
  "email", "firstName", "lastName", "name", "phoneNumber", "company", "country", "city",
  "address", "website", "socialOne", "socialTwo", "points", "referrals", "isVerified",
  "unsubscribed", "isGDPR", "createdAt", "data", "actions",
];
const LEAVE_OUT = "";
const $ = (id) => document.getElementById(id);

const upload = { file: null, head: "", header: [], custom: [], labels: {}, listId: null };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

function say(text, bad = false) {
  $("import-status").textContent = text;
  $("import-status").classList.toggle("error", bad);
}

// ---- the file's header and the mapping ------------------------------------------------------

export function delimiterOf(line) {
  // The header line's separator, as the service reads it: a comma if it holds one, else the
  // `;`, tab or `|` it holds most.
  if (line.includes(",")) return ",";
  let best = ",";
  let most = 0;
  for (const candidate of [";", "\t", "|"]) {
    const count = line.split(candidate).length - 1;
    if (count > most) { best = candidate; most = count; }
  }
  return best;
}

export function headerOf(text, delimiter = "") {
  // The first record of CSV text (RFC 4180: quoted cells may hold the separator, quotes and
  // newlines); the separator is `delimiter`, or the first line's.
  const separator = delimiter === "tab" ? "\t" : delimiter || delimiterOf(text.split(/\r?\n/, 1)[0]);
  const cells = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 1; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) { cells.push(cell); cell = ""; }
    else if (c === "\n" || c === "\r") break;
    else cell += c;
  }
  cells.push(cell);
  return cells.map((name, i) => (i === 0 ? name.replace(/^\uFEFF/, "") : name));
}

function fieldChoices() {
  return [...CONTACT_FIELDS, ...upload.custom.map((field) => field.key)];
}

export function fieldFor(column, known, labels) {
  // The field a column fills by its header: a field's key, or its label (case and spaces
  // aside, so "Lifetime value" and "lifetime  value" both find `lifetimeValue`).
  if (known.includes(column)) return column;
  const plain = (text) => text.trim().toLowerCase().replace(/\s+/g, " ");
  return known.find((key) => labels[key] && plain(labels[key]) === plain(column)) || LEAVE_OUT;
}

function mappingRow(column, index) {
  const known = fieldChoices();
  const select = el("select", { id: `map-${index}`, "data-column": column });
  select.append(el("option", { value: LEAVE_OUT, text: "leave out" }));
  for (const field of known) {
    select.append(el("option", { value: field, text: upload.labels[field] || field }));
  }
  select.value = fieldFor(column, known, upload.labels);
  const label = el("label", { for: `map-${index}`, text: column || "(no name)" });
  return el("tr", {}, el("th", { scope: "row" }, label), el("td", {}, select));
}

export function mappingOf(selects) {
  // `{column: field or null}` for the columns whose field is not their own header.
  const mapping = {};
  for (const select of selects) {
    const column = select.dataset.column;
    const field = select.value === LEAVE_OUT ? null : select.value;
    if (field !== column) mapping[column] = field;
  }
  return mapping;
}

async function chooseFile(file) {
  upload.file = file;
  upload.listId = sessionStorage.getItem(LIST_STORAGE);
  $("import-result").replaceChildren();
  $("import-proposal").hidden = true;
  upload.head = await file.slice(0, HEADER_BYTES).text();
  upload.custom = await customFields(upload.listId);
  upload.labels = await fieldLabels(upload.listId);
  showColumns();
}

function showColumns() {
  upload.header = headerOf(upload.head, $("import-delimiter").value);
  $("import-mapping").querySelector("tbody").replaceChildren(...upload.header.map(mappingRow));
  $("import-mapping-area").hidden = false;
  say(`${upload.file.name}: ${upload.header.length} columns. Check it before importing.`);
}

async function customFields(listId) {
  const answer = await send("GET", `v4/lists/${encodeURIComponent(listId)}`);
  return (answer.list && answer.list.customFields) || [];
}

async function fieldLabels(listId) {
  // `{key: label}` of the list's fields, as the builder shows them (custom fields too).
  const answer = await send("GET", `v4/lists/${encodeURIComponent(listId)}/fields`);
  const labels = {};
  for (const field of answer.fields || []) labels[field.key] = field.label;
  for (const field of upload.custom) if (field.label) labels[field.key] = field.label;
  return labels;
}

// ---- the service ----------------------------------------------------------------------------

function importUrl(extra) {
  const selects = [...$("import-mapping").querySelectorAll("select")];
  const query = new URLSearchParams({
    listId: upload.listId,
    mode: $("import-mode").value,
    mapping: JSON.stringify(mappingOf(selects)),
    ...formatOf(),
    ...extra,
  });
  return `v4/contacts/import?${query}`;
}

export function formatQuery(dateOrder, decimal, delimiter) {
  // The file's format as the import's parameters, leaving out what the service assumes.
  const query = {};
  if (dateOrder !== "ISO") query.dateOrder = dateOrder;
  if (decimal !== ".") query.decimal = decimal;
  if (delimiter) query.delimiter = delimiter;
  return query;
}

function formatOf() {
  return formatQuery($("import-date-order").value, $("import-decimal").value,
    $("import-delimiter").value);
}

async function send(method, path, body, accept = "application/json") {
  const headers = { apiKey: storedKey(), Accept: accept };
  if (body !== undefined) headers["Content-Type"] = "text/csv";
  const response = await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store" });
  if (accept !== "application/json" && response.ok) return response;
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) throw refusal(payload, response.status);
  return payload.data;
}

function refusal(payload, status) {
  const issues = (payload.errors || []).map((issue) => `${issue.pointer}: ${issue.detail}`);
  const message = payload.message || payload.detail || `The service answered ${status}`;
  return new Error([message, ...issues.slice(0, 5)].join("\n"));
}

async function dryRun() {
  say("Checking every row…");
  try {
    let result = await send("POST", importUrl({ dryRun: "true" }), upload.file);
    if (takeProposal(result)) {
      say("Checking every row again, read as the file looks written…");
      result = await send("POST", importUrl({ dryRun: "true" }), upload.file);
    }
    showDryRun(result);
  } catch (error) {
    say(error.message, true);
  }
}

function takeProposal(result) {
  // Sets the format the service proposes from the file's cells; whether anything changed.
  const proposed = result.proposed || {};
  const reasons = result.proposedBecause || [];
  $("import-proposal").textContent = reasons.length ? `The file: ${reasons.join("; ")}.` : "";
  $("import-proposal").hidden = reasons.length === 0;
  let changed = false;
  for (const [name, id] of [["dateOrder", "import-date-order"], ["decimal", "import-decimal"]]) {
    if (proposed[name] && $(id).value !== proposed[name]) {
      $(id).value = proposed[name];
      changed = true;
    }
  }
  return changed;
}

function showDryRun(result) {
  const repeating = result.duplicates ? `, ${result.duplicates} repeat an earlier row's e-mail` : "";
  say(`${result.rows} rows: ${result.valid} would be imported, ${result.invalid} have problems` +
    `${repeating}.`);
  const fields = previewColumns(result.preview);
  const head = el("tr", {}, el("th", { scope: "col", text: "Row" }),
    ...fields.map((name) => el("th", { scope: "col", text: name })));
  const rows = result.preview.map((row) => el("tr", {}, el("td", { text: String(row.row) }),
    ...fields.map((name) => el("td", { text: shown(valueAt(row.contact, name)) }))));
  const table = el("table", { id: "import-preview" }, el("caption", { text: "As they would be stored" }),
    el("thead", {}, head), el("tbody", {}, ...rows));
  const problems = result.problems.slice(0, PROBLEMS_SHOWN).map((p) =>
    el("li", { text: `Row ${p.row}${p.column ? `, ${p.column}` : ""}: ${p.detail}` }));
  const more = result.problems.length - problems.length + result.problemsNotListed;
  if (more > 0) problems.push(el("li", { text: `…and ${more} more` }));
  const list = el("ul", { id: "import-problems", class: "problems", "aria-label": "Bad cells" }, ...problems);
  const repeated = (result.duplicateRows || []).slice(0, PROBLEMS_SHOWN).map((d) =>
    el("li", { text: `Row ${d.row}: ${d.email}, as row ${d.sameAsRow} (imported once)` }));
  if (result.duplicates > repeated.length) {
    repeated.push(el("li", { text: `…and ${result.duplicates - repeated.length} more` }));
  }
  const repeats = el("ul", { id: "import-duplicates", class: "problems",
    "aria-label": "Repeated e-mails" }, ...repeated);
  $("import-result").replaceChildren(table, list, repeats);
  $("import-run").disabled = false;
}

function previewColumns(preview) {
  const names = new Set(["email"]); // the contact's e-mail first, then the fields as sent
  for (const row of preview) {
    for (const [name, value] of Object.entries(row.contact)) {
      if (name === "data" && value && typeof value === "object") {
        for (const key of Object.keys(value)) names.add(`data.${key}`);
      } else names.add(name);
    }
  }
  return [...names];
}

function valueAt(contact, name) {
  if (!name.startsWith("data.")) return contact[name];
  return (contact.data || {})[name.slice(5)];
}

function shown(value) {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

async function runImport() {
  $("import-run").disabled = true;
  $("import-progress").hidden = false;
  say("Importing…");
  try {
    const response = await send("POST", importUrl({}), upload.file, "application/x-ndjson");
    for await (const line of lines(response)) showLine(line);
  } catch (error) {
    say(error.message, true);
  }
}

async function* lines(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      yield JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
    }
    if (done) return;
  }
}

function showLine(line) {
  if (line.progress) {
    const p = line.progress;
    say(`Read ${p.read} rows: ${p.written} written, ${p.rejected} rejected…`);
    return;
  }
  if (line.data) {
    const d = line.data;
    $("import-progress").hidden = true;
    say(`Imported: ${d.read} rows read, ${d.created} created, ${d.updated} updated, ` +
      `${d.exists} already there, ${d.duplicate} repeated, ` +
      `${d.suppressed ? `${d.suppressed} suppressed (erased earlier), ` : ""}` +
      `${d.rejected} rejected.`);
    return;
  }
  say(line.message || line.detail || "The import stopped", true);
}

// ---- wiring ---------------------------------------------------------------------------------

function wire() {
  const panel = $("import-panel");
  const workspace = $("workspace");
  const follow = () => { panel.hidden = workspace.hidden; };
  new MutationObserver(follow).observe(workspace, { attributes: true, attributeFilter: ["hidden"] });
  follow();
  $("import-file").addEventListener("change", (event) => {
    const [file] = event.target.files;
    if (file) chooseFile(file).catch((error) => say(error.message, true));
  });
  $("import-check").addEventListener("click", dryRun);
  $("import-run").addEventListener("click", runImport);
  $("import-mapping").addEventListener("change", () => { $("import-run").disabled = true; });
  $("import-mode").addEventListener("change", () => { $("import-run").disabled = true; });
  $("import-format").addEventListener("change", () => { $("import-run").disabled = true; });
  $("import-delimiter").addEventListener("change", () => { if (upload.file) showColumns(); });
}

if (typeof document !== "undefined" && document.getElementById("import-panel")) wire();
