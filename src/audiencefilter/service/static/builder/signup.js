// An example sign-up form of the service (`GET /signup`): it asks the service, with the list's
// public key, which fields the list opens to sign-ups (`GET /v4/lists/{listId}/signup-form`)
// and shows those alone, so it never sends a field the key may not set. The key and the list
// are typed in, or read from the page's fragment (`#key=...&list=...`), which no request
// carries; they are kept in memory only. A refusal is shown in the service's words.

import { call } from "./api.js";

const $ = (id) => document.getElementById(id);
const state = { key: null, listId: null };

function say(id, text) {
  $(id).textContent = text;
}

function element(tag, attributes = {}) {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === undefined) continue;
    if (name === "text") made.textContent = value;
    else made.setAttribute(name, value === true ? "" : String(value));
  }
  return made;
}

// ---- the form ------------------------------------------------------------------------------

function inputFor(field, id) {
  // The input of one field, by the type the service says it takes; its name is the key the
  // value is sent under (`email`, `firstName`, `data.birthday`).
  const common = { id, name: field.key, "data-type": field.type, required: field.required };
  if (field.key === "email") return element("input", { ...common, type: "email", autocomplete: "email" });
  if (field.type === "date") return element("input", { ...common, type: "date" });
  if (field.type === "boolean") return element("input", { ...common, type: "checkbox" });
  const numeric = field.type === "number" ? "decimal" : undefined;
  return element("input", { ...common, type: "text", inputmode: numeric, autocomplete: "off" });
}

function fieldView(field, index) {
  const id = `field-${index}`;
  const input = inputFor(field, id);
  const text = field.required ? field.label : `${field.label} (optional)`;
  const label = element("label", { for: id, text });
  if (field.type === "boolean") {
    const row = element("div", { class: "check" });
    row.append(input, label);
    return [row];
  }
  const views = [label, input];
  if (field.type.endsWith("[]")) {
    const help = element("p", { class: "field-help", id: `${id}-help`, text: "Separated by commas." });
    input.setAttribute("aria-describedby", help.id);
    views.push(help);
  }
  return views;
}

async function openForm(key, listId) {
  say("setup-status", "Asking the service which fields this list's form collects…");
  let form;
  try {
    form = await call(key, "GET", `v4/lists/${encodeURIComponent(listId)}/signup-form`);
  } catch (error) {
    say("setup-status", `No form: ${error.message}`);
    $("signup").hidden = true;
    return;
  }
  state.key = key;
  state.listId = form.listId;
  $("signup-fields").replaceChildren(...form.fields.flatMap(fieldView));
  const also = form.allData ? " It also takes any key of data a form names." : "";
  say("setup-status", `The form of list ${form.listId}: ${form.fields.length} fields.${also}`);
  say("signup-result", "");
  say("signup-error", "");
  $("signup").hidden = false;
}

// ---- sending -------------------------------------------------------------------------------

function valueOf(input) {
  // The value as the service takes it; undefined for an empty optional input (not sent).
  const type = input.dataset.type || "string";
  if (input.type === "checkbox") return input.checked;
  const text = input.value.trim();
  if (text === "") return undefined;
  if (type.endsWith("[]")) return text.split(/\s*,\s*/).filter((item) => item !== "");
  if (type === "number" && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

function bodyOf(inputs, listId) {
  // `{listId, email, firstName, data: {birthday}}` from the named inputs of the form: a name
  // `data.<key>` is that key of `data`. Whatever inputs the form holds are sent, so what the
  // service accepts is the service's to say (a crafted input is refused there, not here).
  const body = { listId };
  for (const input of inputs) {
    const value = input.name ? valueOf(input) : undefined;
    if (value === undefined) continue;
    if (input.name.startsWith("data.")) {
      body.data = body.data || {};
      body.data[input.name.slice(5)] = value;
    } else body[input.name] = value;
  }
  return body;
}

async function signUp(event) {
  event.preventDefault();
  say("signup-result", "");
  say("signup-error", "");
  const inputs = [...$("signup-form").querySelectorAll("input[name]")];
  const body = bodyOf(inputs, state.listId);
  if (!body.email) {
    say("signup-error", "Enter your e-mail address.");
    inputs.find((input) => input.name === "email").focus();
    return;
  }
  try {
    const answer = await call(state.key, "POST", "v4/contacts", body);
    say("signup-result", `Signed up ${answer.contact.email}. Thank you!`);
    $("signup-form").reset();
  } catch (error) {
    say("signup-error", `Not signed up: ${error.message}`);
  }
}

// ---- wiring --------------------------------------------------------------------------------

function fromFragment() {
  const params = new URLSearchParams(window.location.hash.slice(1));
  return { key: params.get("key") || "", list: params.get("list") || "" };
}

$("setup-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const key = $("public-key").value.trim();
  const list = $("list-id").value.trim();
  if (key && list) openForm(key, list);
  else say("setup-status", "Enter the list's public key and its id.");
});
$("signup-form").addEventListener("submit", signUp);
const given = fromFragment();
if (given.key && given.list) {
  $("public-key").value = given.key;
  $("list-id").value = given.list;
  openForm(given.key, given.list);
}
