// The text syntax names the audiences a filter reads by id (`audiences some (id = "aud_…")`),
// as the service stores them; a person reads and types their names. `namedText` writes each
// audience condition's id by its name where the list has one audience of that name: the
// service reads `name = "…"` back to that id (and refuses a name several audiences share,
// naming their ids), so the text shown reads back as the same filter. An id whose name is
// shared, or that the list does not have, stays an id.

const ONE = /(?<=\()id = "(aud_[0-9a-f]+)"(?=\))/g;
const MANY = /(?<=\()id in \[("aud_[0-9a-f]+"(?:, "aud_[0-9a-f]+")*)\](?=\))/g;

export function uniqueNames(audiences) {
  // id -> name, for the audiences whose name no other audience of the list has.
  const counted = new Map();
  for (const a of audiences) counted.set(a.name, (counted.get(a.name) || 0) + 1);
  return new Map(audiences.filter((a) => counted.get(a.name) === 1).map((a) => [a.id, a.name]));
}

export function namedText(text, audiences) {
  // `text` with each `(id = "aud_…")` and `(id in ["aud_…", …])` of a uniquely named
  // audience written `(name = "…")`, `(name in ["…", …])`.
  if (!text || !text.includes("aud_")) return text;
  const names = uniqueNames(audiences);
  const named = text.replace(ONE, (whole, id) =>
    names.has(id) ? `name = ${JSON.stringify(names.get(id))}` : whole,
  );
  return named.replace(MANY, (whole, listed) => {
    const ids = listed.match(/aud_[0-9a-f]+/g);
    if (!ids.every((id) => names.has(id))) return whole;
    return `name in [${ids.map((id) => JSON.stringify(names.get(id))).join(", ")}]`;
  });
}
