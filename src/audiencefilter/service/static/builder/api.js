// The service's API as the builder uses it: same origin, the private key in the `apiKey`
// header only. The key lives in this tab's sessionStorage (gone when the tab closes); it is
// never put in a URL, a cookie or localStorage.

const KEY_STORAGE = "audiencefilter.builder.apiKey";
const PUBLIC_PREFIX = "afk_pub_";

export class ApiError extends Error {
  // A refused request: the status, the service's message and, for filter problems, the
  // library's details (path, message, line, column).
  constructor(status, body) {
    super(messageOf(body, status));
    this.status = status;
    this.body = body;
    this.details = Array.isArray(body && body.details) ? body.details : [];
  }
}

function messageOf(body, status) {
  if (body && typeof body.message === "string") return body.message;
  if (body && typeof body.error === "string") return body.error;
  return `The service answered ${status}`;
}

export function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
}

export function looksPublic(key) {
  return key.startsWith(PUBLIC_PREFIX);
}

export async function checkKey(key) {
  // A public key may only create contacts: the service answers 403 to anything else, which is
  // how the kind of a well-formed key is told; 401 is a key the service does not accept.
  if (looksPublic(key)) throw publicKeyError();
  try {
    await call(key, "GET", "v4/lists?limit=1");
  } catch (error) {
    if (error.status === 403) throw publicKeyError();
    throw error;
  }
  sessionStorage.setItem(KEY_STORAGE, key);
}

function publicKeyError() {
  return new ApiError(403, {
    message:
      "This is a public key: it may only sign contacts up. The builder reads and changes " +
      "audiences, so it needs a private key (afk_priv_...).",
  });
}

export async function call(key, method, path, body, signal) {
  const headers = { apiKey: key, Accept: "application/json" };
  const init = { method, headers, credentials: "omit", cache: "no-store", signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const payload = await answered(response);
  if (!response.ok) throw new ApiError(response.status, payload);
  return payload.data;
}

async function answered(response) {
  // The answer's JSON; a body that is not JSON as its message.
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return { message: text.slice(0, 200) };
  }
}

export async function file(key, path) {
  // A file the service streams (an export), as its bytes and the name the service gives it.
  const headers = { apiKey: key };
  const response = await fetch(path, { headers, credentials: "omit", cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, await answered(response));
  const disposition = response.headers.get("Content-Disposition") || "";
  const named = disposition.match(/filename="([^"]+)"/);
  return { blob: await response.blob(), filename: named ? named[1] : "export.csv" };
}

export function api(key) {
  // The calls of the page, bound to one key.
  const q = encodeURIComponent;
  return {
    lists: () => call(key, "GET", "v4/lists?limit=100"),
    fields: (listId) => call(key, "GET", `v4/lists/${q(listId)}/fields`),
    actionNames: (listId) => call(key, "GET", `v4/lists/${q(listId)}/action-names`),
    audiences: (listId) => call(key, "GET", `v4/audiences?listId=${q(listId)}&limit=100`),
    audience: (id) => call(key, "GET", `v4/audiences/${q(id)}?limit=1`),
    create: (body) => call(key, "POST", "v4/audiences?limit=1", body),
    update: (id, body) => call(key, "PATCH", `v4/audiences/${q(id)}?limit=1`, body),
    remove: (id) => call(key, "DELETE", `v4/audiences/${q(id)}`),
    versions: (id) => call(key, "GET", `v4/audiences/${q(id)}/versions?limit=100`),
    restore: (id, number) =>
      call(key, "POST", `v4/audiences/${q(id)}/versions/${q(number)}/restore?limit=1`),
    // A superseded preview is aborted (`signal`): its answer would be dropped anyway.
    preview: (body, signal) => call(key, "POST", "v4/audiences/preview?limit=20", body, signal),
    // The draft's size from the list's sample, and what compare proves of it (analysis.js).
    estimate: (body) => call(key, "POST", "v4/audiences/estimate", body),
    compare: (body) => call(key, "POST", "v4/audiences/compare", body),
    contact: (id) => call(key, "GET", `v4/contacts/${q(id)}`),
    // The audience's members as CSV (`bom`: with a byte order mark, for Excel).
    exportCsv: (id, bom) =>
      file(key, `v4/audiences/${q(id)}/export?format=csv${bom ? "&bom=true" : ""}`),
    // A contact's erasure (right to erasure): deleted, its e-mail redacted and suppressed.
    erase: (listId, contactId) =>
      call(key, "POST", `v4/lists/${q(listId)}/contacts/${q(contactId)}/erase`),
    // Several contacts by id in one request (at most 100), for the e-mails a panel shows.
    contactsByIds: (listId, ids) =>
      call(key, "GET", `v4/contacts?listId=${q(listId)}&ids=${ids.map(q).join(",")}&limit=${ids.length}`),
    // Contacts whose e-mail contains `text` (any case), for "why in or out".
    searchContacts: (listId, text, limit) => {
      const where = JSON.stringify({ email: { contains: text } });
      return call(
        key,
        "GET",
        `v4/contacts?listId=${q(listId)}&limit=${limit}&sort=email&order=asc&filters=${q(where)}`,
      );
    },
    events: (listId, after) =>
      call(
        key,
        "GET",
        `v4/events?listId=${q(listId)}&limit=1000${after ? `&after=${q(after)}` : ""}`,
      ),
  };
}
