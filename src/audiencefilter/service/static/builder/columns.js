// The preview table's columns: the e-mail, then each of the contact's fields the filter reads,
// in the order the rules read them, so a member's row shows why it is in (a filter on points
// and a birthday shows both); a filter reading none of them (only actions or audiences) shows
// the contact's name. A custom field is read from `data` under its key, a path into `data`
// by its keys. A behaviour's rules are over actions, not the contact, so they add no column.

const MOST_COLUMNS = 5;

function fieldKeys(node, out) {
  if (node.kind === "group") node.children.forEach((child) => fieldKeys(child, out));
  else if (node.kind === "rule") out.push(node);
  return out;
}

function pathRead(keys) {
  return (contact) => keys.reduce((value, key) => (value == null ? undefined : value[key]), contact.data);
}

function columnOf(node, field) {
  if (field.type === "json") {
    const keys = node.keys.filter((key) => key !== "");
    const key = `data:${JSON.stringify(keys)}`;
    return { key, label: [field.label, ...keys].join(" › "), read: pathRead(keys) };
  }
  const read = field.custom ? pathRead([field.key]) : (contact) => contact[field.key];
  return { key: field.key, label: field.label, read };
}

const NAME = {
  key: "name",
  label: "Name",
  read: (contact) => [contact.firstName, contact.lastName].filter(Boolean).join(" "),
};

export function columnsOf(root, fields) {
  // `[{key, label, read(contact)}]` for the rules of the tree `root` over the catalogue
  // `fields` (a Map of key to entry); the name alone when the rules read no field.
  const columns = [];
  for (const node of fieldKeys(root, [])) {
    const field = fields.get(node.field);
    if (!field) continue;
    const column = columnOf(node, field);
    if (!columns.some((c) => c.key === column.key)) columns.push(column);
  }
  return columns.length ? columns.slice(0, MOST_COLUMNS) : [NAME];
}

export function shownValue(value) {
  // A cell: text as it is, lists joined, nothing for a missing or null value.
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(shownValue).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
