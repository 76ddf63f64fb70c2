// Export and erase from the page. An audience's members are downloaded as the service's CSV
// export (`GET /v4/audiences/{id}/export?format=csv`, `bom=true` for spreadsheets that read
// UTF-8 only after a byte order mark); a contact is erased (`POST /v4/lists/{listId}/contacts/
// {id}/erase`) once the user confirmed it, and the page says what the erasure did.

export function fileName(audienceName, fallback) {
  // The download's name: the audience's, without the characters file systems refuse.
  const cleaned = String(audienceName || "").replace(/[\\/:*?"<>|\u0000-\u001f]+/g, "_").trim();
  return cleaned ? `${cleaned}.csv` : fallback;
}

export function download(blob, name) {
  // Saves `blob` as the file `name`, as a link with `download` does.
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

export function sizeText(bytes) {
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} kB`;
}

function counted(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

export function erasureText(email, erasure) {
  // What an erasure did, in words.
  const gone = erasure.deleted ? "deleted" : "already deleted before";
  return (
    `Erased ${email}: the contact was ${gone}; ` +
    `${counted(erasure.events, "event", "events")}, ` +
    `${counted(erasure.deliveries, "webhook delivery", "webhook deliveries")} and ` +
    `${counted(erasure.answers, "recorded answer", "recorded answers")} redacted. ` +
    "The list refuses this e-mail from now on (suppressed)."
  );
}
