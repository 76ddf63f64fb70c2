"""Words and examples for the OpenAPI document: every operation, parameter, body and response.

FastAPI documents what the code declares: types, and the summaries and descriptions routes give.
What a reader of `/docs` needs besides (what an operation does, what each parameter means, a
sample of each request and answer) is written here, in one table per kind, and attached by
`openapi.build` to whatever the routes left undescribed: a route's own description wins.

Request examples are written by hand, one per operation that takes a body. Response examples
are built from each response's schema (`example_of`), with values chosen by field name (`id`,
`email`, `createdAt`...) so that they read like real answers; error examples are written per
status. The test suite walks the document and checks that nothing is left without a
description or an example, and that every example is valid against its own schema.
"""

from __future__ import annotations

from typing import Any

from ..ground.errors import FILTERS_REQUIRED, ValidationIssue
from ..http import idempotency
from ..http.errors import error_body

LIST_ID = "lst_12c7592f788f34d9ddb1"
CONTACT_ID = "con_a1f5b38be8774dbc97af"
AUDIENCE_ID = "aud_fdd42d4dde73671caa9b"
ACTION_ID = "act_5b0c6f1e2d3a4b5c6d7e"
MOMENT = "2025-01-31T09:00:00Z"
WEBHOOK_ID = "whk_7e8f9a0b1c2d3e4f5a6b"
DELIVERY_ID = "msg_0a1b2c3d4e5f6a7b8c9d"
WEBHOOK_URL = "https://hooks.example.com/audiencefilter"
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

OPERATIONS: dict[str, str] = {
    "POST /v4/lists": "Creates a list (a project) of the account. `url` is derived from the "
    "name when absent and must be unique; a taken one is a 409.",
    "GET /v4/lists": "The account's lists, newest first, a page at a time.",
    "GET /v4/lists/{id}": "One list of the account; another account's id is a 404.",
    "PATCH /v4/lists/{id}": "Changes the fields sent, and only those; `null` clears a field "
    "that may be cleared.",
    "DELETE /v4/lists/{id}": "Deletes the list with its contacts, audiences and actions, and "
    "answers the list as it was.",
    "GET /v4/projects": "The account's lists under their other name, projects: the same "
    "content as `GET /v4/lists`.",
    "GET /v4/contacts": "The contacts of a list, with their position and audiences, filtered "
    "by the query parameters (text ones match case-insensitively, anywhere in the value), by a "
    "where clause (`filters`, JSON) or by the same in the text syntax (`filtersText`), sorted "
    "and paginated.",
    "POST /v4/contacts": "Creates a contact in a list. Any key may call it: a public key (a "
    "sign-up form) may not set `points`, `referrals` or the three flags. An email already in "
    "the list, in any case, is a 409.",
    "GET /v4/contacts/{id}": "One contact, with its list, position and audiences.",
    "PATCH /v4/contacts/{id}": "Changes the fields sent, and only those; `null` clears a "
    "profile field.",
    "DELETE /v4/contacts/{id}": "Deletes the contact (its actions and memberships go with it) "
    "and answers it as it was.",
    "POST /v4/actions": "Records an action of a contact and adds its `increase` to the "
    "contact's points, in one transaction.",
    "GET /v4/actions": "The actions of one contact, newest first, a page at a time.",
    "GET /v4/actions/{id}": "One action of the account.",
    "GET /v4/audiences/{id}/versions/{number}": "One version of the audience: its name, mode "
    "and filter then, the API key that made the change and when, and whether it is current.",
    "DELETE /v4/actions/{id}": "Deletes the action; the points it added stay with the contact.",
    "POST /v4/audiences": "Creates an audience: smart (a filter decides its members, at each "
    "read) or manual (members added by id). Answers it with its first page of members (`subs`) "
    "and `warnings` when the filter can never match.",
    "GET /v4/audiences": "The audiences of a list, newest first, each with its number of "
    "members (`subsCount`).",
    "PATCH /v4/audiences/{id}": "Changes the name, the mode or the filter of an audience, and "
    "answers it with a page of its members.",
    "DELETE /v4/audiences/{id}": "Deletes the audience (its stored members go with it); the "
    "contacts stay.",
    "POST /v4/audiences/{id}/members": "Adds contacts of the audience's list to a manual "
    "audience; ids already members are not an error. All or nothing.",
    "DELETE /v4/audiences/{id}/members/{contactId}": "Removes one contact from a manual "
    "audience; a contact that is not a member is a 404.",
    "GET /v4/events": "The events of a list after a cursor, in commit order: contacts entering "
    "and leaving audiences (`audience.entered`, `audience.left`, with their cause) and the "
    "lifecycle of contacts and audiences. Keep `next` and ask again with `after=` it to "
    "receive every committed event once, also after downtime.",
    "POST /v4/webhooks": "Registers an endpoint of a list: the list's events of the chosen "
    "types are POSTed to its URL, signed (Standard Webhooks: `webhook-id`, `webhook-timestamp`, "
    "`webhook-signature`). The answer shows the signing secret, the only time it is shown. The "
    "URL must be http(s) and resolve to public addresses only.",
    "GET /v4/webhooks": "The endpoints of a list, newest first, with their status (a "
    "disabled one says why) and their failed attempts since the last success.",
    "GET /v4/webhooks/{id}": "One endpoint, without its secret.",
    "PATCH /v4/webhooks/{id}": "Changes the URL, the event types or the description; "
    "`enabled: true` enables a disabled endpoint again (its waiting deliveries are sent at "
    "once), `enabled: false` pauses it.",
    "DELETE /v4/webhooks/{id}": "Deletes the endpoint and its delivery log; nothing more is "
    "sent to it.",
    "POST /v4/webhooks/{id}/secret": "Makes a new signing secret and answers it, the only time "
    "it is shown. Until `previousSecretUntil` deliveries carry a signature with each secret.",
    "GET /v4/webhooks/{id}/deliveries": "The endpoint's deliveries, newest event first, each "
    "with every attempt (when, the status code or the error, how long it took).",
    "POST /v4/webhooks/{id}/deliveries/{deliveryId}/redeliver": "Sends a delivery again, "
    "with the same `webhook-id` and body, with a fresh run of retries; the endpoint must be "
    "enabled.",
    "GET /health/live": "Answers as long as the process runs; no key, no rate limit.",
    "GET /health/ready": "Answers 200 when the database answers, 503 otherwise; for load "
    "balancers and orchestrators.",
}

_TEXT_MATCH = "Contacts whose {} contains this text, ignoring case."
_FLAG = "`true` or `false`: contacts whose {} flag is so."

# name -> (description, example)
PARAMETERS: dict[str, tuple[str, Any]] = {
    "limit": ("How many items a page holds (1 to 20000; default 20000).", 50),
    "page": ("Which page, from 1.", 1),
    "listId": ("The list, by id (one of the account's).", LIST_ID),
    "subId": ("The contact whose actions to list.", CONTACT_ID),
    "sort": (
        "The field contacts are sorted by: points, createdAt, email, firstName, lastName or "
        "position (the waitlist rank). Default: position.",
        "points",
    ),
    "order": ("`asc` or `desc` (the default).", "desc"),
    "email": (_TEXT_MATCH.format("email"), "example.com"),
    "firstName": (_TEXT_MATCH.format("first name"), "ada"),
    "lastName": (_TEXT_MATCH.format("last name"), "love"),
    "phoneNumber": (_TEXT_MATCH.format("phone number"), "+44"),
    "name": (_TEXT_MATCH.format("name"), "ada"),
    "company": (_TEXT_MATCH.format("company"), "acme"),
    "country": (_TEXT_MATCH.format("country"), "FR"),
    "city": (_TEXT_MATCH.format("city"), "london"),
    "socialOne": (_TEXT_MATCH.format("first social handle"), "@ada"),
    "socialTwo": (_TEXT_MATCH.format("second social handle"), "@ada"),
    "website": (_TEXT_MATCH.format("website"), "example.com"),
    "isVerified": (_FLAG.format("isVerified"), True),
    "unsubscribed": (_FLAG.format("unsubscribed"), False),
    "isGDPR": (_FLAG.format("isGDPR"), True),
    "filters": (
        "A where clause (JSON) the contacts must also match; blank or `{}`: no condition.",
        '{"points": {"gte": 100}, "country": {"in": ["FR", "DE"]}}',
    ),
    "filtersText": (
        "The same condition in the text syntax, instead of `filters`; not both.",
        'points >= 100 and country in ["FR", "DE"]',
    ),
    "contactId": ("The contact to remove, by id.", CONTACT_ID),
    "after": (
        "A cursor of an earlier answer: only the events committed after it.",
        "ev1.bHN0XzEyYzc1OTJmNzg4ZjM0ZDlkZGIxOjQy",
    ),
    "format": ("`csv` or `jsonl` (JSON Lines).", "csv"),
    "bom": ("CSV only: `true` starts the file with a UTF-8 byte order mark.", True),
    "mode": ("How an import treats contacts that exist: `create` (default) or `upsert`.", "upsert"),
    "events": ("`false`: an import writes no event; membership still follows.", False),
    "mapping": (
        "CSV only: a JSON object naming, for a column, the field it fills (a contact field or a "
        "declared custom field), or null to leave the column out; other columns are read by "
        "their header.",
        '{"E-mail address": "email", "Land": "country", "Notes": null}',
    ),
    "dryRun": (
        "CSV only: `true` writes nothing and answers the first 20 rows as they would be stored "
        "and every bad cell (row, column, why).",
        True,
    ),
    "dateOrder": (
        "CSV only: how the file writes dates: `DMY` (26/11/2026), `MDY` (11/26/2026) or `ISO`.",
        "DMY",
    ),
    "decimal": ("CSV only: the decimal mark, `.` or `,` (1234,56).", ","),
    "delimiter": ("CSV only: the cells' separator, `,`, `;`, `tab` or `|`.", ";"),
    "ids": ("Only these contacts: their ids, comma-separated (at most 100).", CONTACT_ID),
    "deliveryId": ("The delivery, by id (its `webhook-id`).", DELIVERY_ID),
    "status": ("Only deliveries in this state: pending, delivered or failed.", "failed"),
    "key": ("The custom field, by key.", "birthday"),
    "wait": (
        "`true`: build the audience's members within the request, even on a large list.",
        True,
    ),
    "filtersAs": (
        "Also answer the filter in this format as `filtersAs` (docs/interop.md).",
        "jsonlogic",
    ),
    "at": (
        "An RFC 3339 instant with its offset: the audience's members then, the replay of its "
        "`audience.entered` / `audience.left` events up to it.",
        "2026-05-01T09:30:00Z",
    ),
    "number": ("The audience's version, by number (1 for the audience as created).", 2),
    "group": ("Only the members drawn into this group of the audience's experiment.", "A"),
    "audiences": (
        "Up to 50 audiences of the list, by id, separated by commas.",
        f"{AUDIENCE_ID},aud_0b1c2d3e4f5a6b7c8d9e",
    ),
    "holdout": ("`false`: the members a sender may mail; `true`: the holdout only.", False),
    idempotency.HEADER: (
        "Any printable ASCII text up to 255 characters, new for each new request: a retry "
        "with the same key and request gets the first answer back.",
        "8e0f1c2a-5b7d-4e39-9a64-0c1d2e3f4a5b",
    ),
}
# (path, name) -> (description, example), where a name means something else on one path.
PATH_PARAMETERS: dict[tuple[str, str], tuple[str, Any]] = {
    ("/v4/audiences/{id}/members", "after"): (
        "The `next` of the previous page: only the members after that contact id.",
        CONTACT_ID,
    ),
}
PATH_IDS = {
    "lists": ("The list, by id.", LIST_ID),
    "contacts": ("The contact, by id.", CONTACT_ID),
    "actions": ("The action, by id.", ACTION_ID),
    "audiences": ("The audience, by id.", AUDIENCE_ID),
    "webhooks": ("The webhook, by id.", WEBHOOK_ID),
}

REQUEST_EXAMPLES: dict[str, Any] = {
    "POST /v4/lists": {"name": "Spring launch", "mode": "waitlist", "color": "#3355ff"},
    "PATCH /v4/lists/{id}": {"title": "Join the spring launch", "referrals": True},
    "POST /v4/contacts": {
        "listId": LIST_ID,
        "email": "ada@example.com",
        "firstName": "Ada",
        "lastName": "Lovelace",
        "city": "London",
        "data": {"plan": "pro"},
    },
    "PATCH /v4/contacts/{id}": {"points": 150, "company": "Analytical Engines"},
    "POST /v4/actions": {"name": "Shared the page", "increase": 10, "subId": CONTACT_ID},
    "POST /v4/audiences": {
        "name": "Top scorers",
        "listId": LIST_ID,
        "filtersText": "points >= 100",
    },
    "PATCH /v4/audiences/{id}": {"filters": '{"points": {"gte": 200}}'},
    "POST /v4/audiences/preview": {
        "listId": LIST_ID,
        "filtersText": 'points >= 100 and country in ["FR", "DE"]',
    },
    "POST /v4/audiences/{id}/members": {"contactIds": [CONTACT_ID]},
    "POST /v4/audiences/estimate": {
        "listId": LIST_ID,
        "filtersText": 'points >= 100 and country in ["FR", "DE"]',
        "exact": False,
    },
    "POST /v4/audiences/compare": {
        "a": {"audienceId": AUDIENCE_ID},
        "b": {"filtersText": "points >= 200"},
    },
    "POST /v4/webhooks": {
        "listId": LIST_ID,
        "url": WEBHOOK_URL,
        "eventTypes": ["audience.entered", "audience.left"],
    },
    "PATCH /v4/webhooks/{id}": {"enabled": True},
    "POST /v4/lists/{listId}/fields": {"key": "birthday", "type": "date", "label": "Birthday"},
    "PATCH /v4/lists/{listId}/fields/{key}": {"label": "Date of birth"},
    "POST /v4/lists/{listId}/suppressions/check": {"email": "ada@example.com"},
    "POST /v4/lists/{listId}/suppressions/remove": {"email": "ada@example.com"},
}

_EMAIL_PROBLEM = ValidationIssue(
    pointer="/body/email",
    detail='expected an email address such as ann@example.com, found the string "nope"',
    expected="an email address such as ann@example.com",
    found='the string "nope"',
)
ERROR_EXAMPLES: dict[int, dict[str, Any]] = {
    400: error_body(
        400, f"Invalid request: /body/email: {_EMAIL_PROBLEM.detail}", [_EMAIL_PROBLEM]
    ),
    401: error_body(401, "Invalid API key"),
    403: error_body(403, "Public keys may only create contacts"),
    404: error_body(404, "List not found"),
    409: error_body(409, "A contact with this email already exists in this list"),
    413: error_body(413, "Request body too large"),
    422: error_body(422, "This Idempotency-Key was already used with a different request"),
    429: error_body(429, "Rate limit exceeded"),
    500: error_body(500, "Internal server error"),
    503: error_body(503, "The database is unavailable; retry later"),
}
RULE_ERROR_EXAMPLE = error_body(400, FILTERS_REQUIRED, string_form=True)

_STRINGS = {
    "id": CONTACT_ID,
    "email": "ada@example.com",
    "firstName": "Ada",
    "lastName": "Lovelace",
    "name": "Ada Lovelace",
    "listId": LIST_ID,
    "subId": CONTACT_ID,
    "audienceId": AUDIENCE_ID,
    "userId": "acc_0c1d2e3f4a5b6c7d8e9f",
    "url": "spring-launch",
    "mode": "waitlist",
    "color": "#3355ff",
    "filters": '{"points":{"gte":100}}',
    "filtersText": "points >= 100",
    "referralLink": "https://pages.example.com/spring-launch?ref=M9x3AfwaZ8Ga",
    "privateLink": f"https://pages.example.com/spring-launch/subscriber/{CONTACT_ID}",
    "status": "ok",
    "message": "These filters can never match any contact: the audience will stay empty.",
    "code": "unsatisfiable",
    "path": "points.gte",
    "pointer": "/body/email",
    "detail": 'expected an email address such as ann@example.com, found the string "nope"',
}


_BY_PARENT = {
    ("audience", "id"): AUDIENCE_ID,
    ("audiences", "id"): AUDIENCE_ID,
    ("list", "id"): LIST_ID,
    ("lists", "id"): LIST_ID,
    ("projects", "id"): LIST_ID,
    ("action", "id"): ACTION_ID,
    ("actions", "id"): ACTION_ID,
    ("audience", "name"): "Top scorers",
    ("audiences", "name"): "Top scorers",
    ("list", "name"): "Spring launch",
    ("lists", "name"): "Spring launch",
    ("projects", "name"): "Spring launch",
    ("action", "name"): "Shared the page",
    ("actions", "name"): "Shared the page",
    ("audience", "mode"): "smart",
    ("audiences", "mode"): "smart",
    ("events", "id"): "evt_3c4d5e6f7a8b9c0d1e2f",
    ("events", "type"): "audience.entered",
    ("events", "cause"): "contact.updated",
    ("events", "contactId"): CONTACT_ID,
    ("events", "audienceId"): AUDIENCE_ID,
    ("events", "cursor"): "ev1.bHN0XzEyYzc1OTJmNzg4ZjM0ZDlkZGIxOjQy",
    ("webhook", "id"): WEBHOOK_ID,
    ("webhooks", "id"): WEBHOOK_ID,
    ("webhook", "url"): WEBHOOK_URL,
    ("webhooks", "url"): WEBHOOK_URL,
    ("webhook", "secret"): WEBHOOK_SECRET,
    ("secret", "secret"): WEBHOOK_SECRET,
    ("deliveries", "id"): DELIVERY_ID,
    ("delivery", "id"): DELIVERY_ID,
    ("deliveries", "webhookId"): WEBHOOK_ID,
    ("delivery", "webhookId"): WEBHOOK_ID,
    ("deliveries", "eventId"): "evt_3c4d5e6f7a8b9c0d1e2f",
    ("delivery", "eventId"): "evt_3c4d5e6f7a8b9c0d1e2f",
}
_EMPTY_LISTS = frozenset({"warnings", "errors", "details", "columns", "allowedOrigins"})


def example_of(
    schema: dict[str, Any], components: dict[str, Any], name: str = "", parent: str = ""
) -> Any:
    """A value valid against `schema` (resolving `#/components/schemas/` references), with
    values chosen by property name (and the name of the object holding it) where one is known;
    optional fields with nothing typical to show are null."""
    if "$ref" in schema:
        target = components[schema["$ref"].rsplit("/", 1)[1]]
        return example_of(target, components, name, parent)
    if (parent, name) in _BY_PARENT:
        return _BY_PARENT[(parent, name)]
    if "example" in schema:
        return schema["example"]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            nullable = any(o.get("type") == "null" for o in schema[key])
            if nullable and name not in _STRINGS:
                return None
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return example_of(options[0], components, name, parent)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if not properties:
            return {"plan": "pro"} if name == "data" else {}
        return {key: example_of(sub, components, key) for key, sub in properties.items()}
    if kind == "array":
        return [example_of(schema.get("items", {}), components, name)]
    if kind == "integer":
        return _integer(schema, name)
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return name not in ("unsubscribed", "isGDPR", "branding")
    if kind == "null":
        return None
    if schema.get("format") == "date-time" or name.endswith("At"):
        return MOMENT
    return _STRINGS.get(name, "text")


def _integer(schema: dict[str, Any], name: str) -> int:
    known = {
        "points": 120,
        "position": 1,
        "total": 1,
        "pages": 1,
        "currentPage": 1,
        "perPage": 20000,
        "startFrom": 1,
        "increase": 10,
        "count": 1,
        "subsCount": 1,
        "row": 1,
    }
    value = known.get(name, 0)
    low = schema.get("minimum", schema.get("exclusiveMinimum", value - 1) + 1)
    high = schema.get("maximum", value)
    return int(min(max(value, low), max(high, low)))
