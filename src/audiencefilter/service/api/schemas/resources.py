"""Request and response schemas: separate models in and out.

Request bodies are strict (`strict=True`: a JSON boolean is not an integer, a string is not a
number) and closed (`extra="forbid"`: a misspelt field is an error, not silently dropped). Optional
fields carry no default in the published schema: a PATCH changes exactly the fields it sends, and
`model_fields_set` says which. Fields that may be cleared accept `null`; the others do not.
Their base (`Body`), the contact's profile fields and an import's row (`ContactImportRow`, which
the domain reads an import's rows with) are `ground/bodies.py`'s.

Response models document the shapes in OpenAPI; handlers build the dicts in
`views.py` beside this module.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from ...domain import custom_fields, list_zone, public_fields
from ...domain.custom_fields import CustomFieldType
from ...ground.bodies import INSTANT_RULE, Body, ContactProfile, optional
from ...ground.errors import ValidationIssue
from ...ground.fields import (
    MAX_INT32,
    Code,
    Color,
    Email,
    FieldKey,
    FilterText,
    Identifier,
    Increase,
    Instant,
    Label,
    LongText,
    Name,
    QueryBool,
    QueryText,
    RefId,
    ShortText,
    Slug,
    StartFrom,
    Url,
)
from ...ground.validation import REFUSED_CHOICE
from ...http.origins import MAX_ORIGINS, Origin, unique_origins

MAX_LIMIT = 20000
ListMode = Literal["waitlist", "newsletter"]
SortKey = Literal["points", "createdAt", "email", "firstName", "lastName", "position"]
Order = Literal["asc", "desc"]
PUBLIC_FORBIDDEN = ("points", "referrals", "isVerified", "unsubscribed", "isGDPR", "createdAt")
PublicFieldsPolicy = Literal["refuse", "ignore"]
PUBLIC_FIELDS_DESCRIPTION = (
    "What a sign-up with a public key may set in this list, besides `email` (always accepted): "
    "profile fields (`firstName`, `company`, ...), `data` (every key of it), `data.<key>` (one "
    "key, such as `data.birthday`) or a custom field of the list by its key (`birthday`); "
    "default: the names (`firstName`, `lastName`, `name`). Points, referrals and the flags can "
    "never be set with a public key."
)
PUBLIC_POLICY_DESCRIPTION = (
    "What a public sign-up sending any other field gets: `refuse` (default), a 403 naming the "
    "field, nothing created; `ignore`, the contact created without it."
)


def _public_field(entry: str) -> str:
    problem = public_fields.entry_problem(entry)
    if problem is not None:
        raise ValueError(problem)
    return entry


PublicField = Annotated[
    str, AfterValidator(_public_field), WithJsonSchema(public_fields.json_schema())
]

TIME_ZONE_DESCRIPTION = (
    "The IANA time zone (`Europe/Paris`, spelled exactly) the list's calendar rules are read in "
    "when they name none (`birthday anniversary within this week`, `createdAt within this "
    "month`); default `UTC`. Changing it judges every smart audience of the list again: "
    "members enter and leave, their events carrying the cause `list.time_zone_changed`."
)
TimeZone = Annotated[
    str,
    Field(min_length=1, max_length=64),
    AfterValidator(list_zone.check),
    WithJsonSchema({"type": "string", "enum": list_zone.accepted()}),
]


def _unique(fields: list[str]) -> list[str]:
    """Each field once, in the order given: a list names a field or does not."""
    return list(dict.fromkeys(fields))


class ContactCreate(ContactProfile):
    """A new contact. Public keys may not set points, referrals, the three flags or
    `createdAt`."""

    email: Email
    listId: Identifier
    createdAt: Instant = optional(
        f"When the contact signed up, for a contact brought from elsewhere: {INSTANT_RULE}. "
        "Default: now."
    )


class ContactUpdate(ContactProfile):
    """Fields to change; `null` clears a profile field."""

    email: Email = optional()


class _ListSettings(Body):
    url: Slug = optional()
    mode: ListMode = optional()
    color: Color | None = optional()
    title: ShortText | None = optional()
    desc: LongText | None = optional()
    socialDescription: LongText | None = optional()
    branding: bool = optional()
    referrals: bool = optional()
    startFrom: StartFrom = optional()
    senderName: ShortText | None = optional()
    replyTo: ShortText | None = optional()
    sender: ShortText | None = optional()
    legal: Code | None = optional()
    domainId: RefId | None = optional()
    defaultPageId: RefId | None = optional()
    referralPageId: RefId | None = optional()
    successPageId: RefId | None = optional()
    listSettingsId: RefId | None = optional()
    whitelistEmailId: RefId | None = optional()
    templateId: RefId | None = optional()
    themeId: RefId | None = optional()
    icon: Url | None = optional()
    favicon: Url | None = optional()
    ogImage: Url | None = optional()
    columns: Annotated[list[ShortText], Field(max_length=100)] = optional()
    customHeadCode: Code | None = optional()
    customBodyCode: Code | None = optional()
    analyticsA: ShortText | None = optional()
    analyticsB: ShortText | None = optional()
    allowedOrigins: Annotated[
        list[Origin], Field(max_length=MAX_ORIGINS), AfterValidator(unique_origins)
    ] = optional(
        "Browser origins (`https://example.com[:port]`, no path) whose pages may create contacts "
        "in this list with a public key; empty: none, besides the service-wide CORS_ORIGINS."
    )
    publicFields: Annotated[
        list[PublicField], Field(max_length=public_fields.MAX_ENTRIES), AfterValidator(_unique)
    ] = optional(PUBLIC_FIELDS_DESCRIPTION)
    publicFieldsPolicy: PublicFieldsPolicy = optional(PUBLIC_POLICY_DESCRIPTION)
    timeZone: TimeZone = optional(TIME_ZONE_DESCRIPTION)


class ListCreate(_ListSettings):
    """A new list; `url` is derived from the name when absent."""

    name: Name


class ListUpdate(_ListSettings):
    name: Name = optional()


class ActionCreate(Body):
    """Adds `increase` to the points of contact `subId`."""

    name: Name
    increase: Increase
    subId: Identifier
    createdAt: Instant = optional(f"When the action happened: {INSTANT_RULE}. Default: now.")


class PageQuery(BaseModel):
    limit: int = Field(default=MAX_LIMIT, ge=1, le=MAX_LIMIT)
    page: int = Field(default=1, ge=1, le=MAX_INT32)


MAX_IDS = 100
"""Contact ids one listing may name (`ids`)."""


class ContactQuery(PageQuery):
    listId: QueryText
    sort: SortKey | None = None
    order: Order = "desc"
    email: QueryText | None = None
    firstName: QueryText | None = None
    lastName: QueryText | None = None
    phoneNumber: QueryText | None = None
    name: QueryText | None = None
    company: QueryText | None = None
    country: QueryText | None = None
    city: QueryText | None = None
    socialOne: QueryText | None = None
    socialTwo: QueryText | None = None
    website: QueryText | None = None
    isVerified: QueryBool | None = None
    unsubscribed: QueryBool | None = None
    isGDPR: QueryBool | None = None
    ids: str | None = Field(
        default=None,
        max_length=MAX_IDS * 40,
        pattern=r"^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$",
        description=f"Only these contacts: their ids, comma-separated, at most {MAX_IDS} "
        "(a page showing events looks their e-mails up in one request).",
    )
    filters: FilterText | None = Field(
        default=None,
        description="A where clause (JSON) that contacts must also match; blank: no condition.",
    )
    filtersText: FilterText | None = Field(
        default=None,
        description="The same condition in the filter library's text syntax "
        '(`points >= 100 and country in ["FR", "DE"]`), instead of `filters`; not both.',
    )


class ActionQuery(PageQuery):
    subId: QueryText


# ---- responses -------------------------------------------------------------------------------


class ListSummary(BaseModel):
    id: str
    name: str
    url: str
    mode: str
    referrals: bool
    color: str | None
    title: str | None
    desc: str | None


class AudienceRef(BaseModel):
    """An audience a contact belongs to."""

    id: str
    name: str
    mode: Literal["manual", "smart"]


AudienceRefs = list[AudienceRef]  # named outside ContactOut, whose `list` field shadows `list`


class ContactOut(BaseModel):
    id: str
    email: str
    firstName: str | None
    lastName: str | None
    phoneNumber: str | None
    createdAt: datetime
    points: int
    referrals: int
    listId: str
    isVerified: bool
    unsubscribed: bool
    data: dict[str, Any]
    address: str | None
    isGDPR: bool
    name: str | None
    socialOne: str | None
    socialTwo: str | None
    website: str | None
    company: str | None
    country: str | None
    city: str | None
    list: ListSummary
    audiences: AudienceRefs = Field(
        description="Audiences of its list the contact belongs to now, oldest audience first."
    )
    referralLink: str
    privateLink: str
    position: int = Field(description="Waitlist position: the list's startFrom for the top rank.")


class ListOut(BaseModel):
    id: str
    url: str
    name: str
    mode: str
    color: str | None
    title: str | None
    desc: str | None
    socialDescription: str | None
    branding: bool
    referrals: bool
    startFrom: int
    senderName: str | None
    replyTo: str | None
    sender: str | None
    legal: str | None
    createdAt: datetime
    updatedAt: datetime
    userId: str
    domainId: str | None
    defaultPageId: str | None
    referralPageId: str | None
    successPageId: str | None
    listSettingsId: str | None
    whitelistEmailId: str | None
    templateId: str | None
    themeId: str | None
    icon: str | None
    favicon: str | None
    ogImage: str | None
    columns: list[str]
    customHeadCode: str | None
    customBodyCode: str | None
    analyticsA: str | None
    analyticsB: str | None
    allowedOrigins: list[str] = Field(
        description="Browser origins whose pages may create contacts in this list."
    )
    publicFields: list[str] = Field(description=PUBLIC_FIELDS_DESCRIPTION)
    publicFieldsPolicy: PublicFieldsPolicy = Field(description=PUBLIC_POLICY_DESCRIPTION)
    customFields: list[CustomFieldOut] = Field(
        description="The list's custom fields: typed keys of each contact's `data` that its "
        "filters name directly (`/v4/lists/{id}/fields`)."
    )
    timeZone: str = Field(description=TIME_ZONE_DESCRIPTION)


def _refuse_date_time(value: Any) -> Any:
    """A date-time type is refused with its reason, not with the nearest name ("date")."""
    reason = custom_fields.type_refusal(value) if isinstance(value, str) else None
    if reason is not None:
        expected = "one of " + ", ".join(f'"{kind}"' for kind in custom_fields.CUSTOM_TYPES)
        raise PydanticCustomError(
            REFUSED_CHOICE,
            "no date-time type: {reason}",
            {"expected": expected, "reason": reason},
        )
    return value


CustomFieldTypeIn = Annotated[CustomFieldType, BeforeValidator(_refuse_date_time)]


class CustomFieldOut(BaseModel):
    key: str = Field(description="The name filters use; the value is kept in `data.<key>`.")
    type: CustomFieldType
    label: str


class CustomFieldCreate(Body):
    """A new custom field of the list."""

    key: FieldKey = Field(
        description="Letters, digits and `_`, starting with a letter, at most 64."
    )
    type: CustomFieldTypeIn = Field(
        description="A date-time is no custom field type: inside `data` its text has no order "
        "every engine shares; `date` keeps the day, an action's `createdAt` the moment."
    )
    label: Label | None = optional("Shown by pages; made from the key when absent.")


class CustomFieldUpdate(Body):
    """A new type (refused while an audience's filter reads the field) or label."""

    type: CustomFieldTypeIn | None = optional()
    label: Label | None = optional()


class CustomFieldData(BaseModel):
    field: CustomFieldOut


class ActionOut(BaseModel):
    id: str
    name: str
    increase: int
    createdAt: datetime
    updatedAt: datetime
    subId: str


class Pagination(BaseModel):
    total: int
    pages: int
    currentPage: int
    perPage: int


class ContactData(BaseModel):
    contact: ContactOut


class ContactsData(BaseModel):
    contacts: list[ContactOut]
    pagination: Pagination


class ListData(BaseModel):
    list: ListOut


class ListsData(BaseModel):
    lists: list[ListOut]
    pagination: Pagination


class ProjectsData(BaseModel):
    projects: list[ListOut]
    pagination: Pagination


class ActionData(BaseModel):
    action: ActionOut


class ActionsData(BaseModel):
    actions: list[ActionOut]
    pagination: Pagination


class SignUpOut(BaseModel):
    """What a public key learns of its sign-up: what it sent, nothing of the list's contacts."""

    email: str
    listId: str


class SignUpData(BaseModel):
    contact: SignUpOut


class ImportResult(BaseModel):
    """What became of one row of an import."""

    row: int = Field(description="The row: its 1-based place in the array, or its line number.")
    status: Literal[
        "created", "updated", "unchanged", "exists", "duplicate", "suppressed", "invalid"
    ]
    id: str | None = Field(
        default=None,
        description="The contact created, updated or left unchanged, or the one that has the "
        "email already.",
    )
    fields: list[str] | None = Field(
        default=None, description="For an updated contact: what changed (`actions`: new ones)."
    )
    sameAsRow: int | None = Field(
        default=None, description="For a duplicate: the earlier row with the same email."
    )
    errors: list[ValidationIssue] | None = Field(
        default=None, description="For an invalid row: its problems; pointers are in the row."
    )


class ImportData(BaseModel):
    listId: str
    mode: Literal["create", "upsert"]
    rows: int = Field(description="Rows received.")
    created: int
    updated: int = Field(description="Contacts an upsert changed.")
    unchanged: int = Field(description="Contacts an upsert found as the row says already.")
    exists: int = Field(
        description="Rows whose email a contact of the list already has (mode `create`)."
    )
    duplicate: int = Field(description="Rows whose email an earlier row of the import has.")
    suppressed: int = Field(
        default=0,
        description="Rows whose email the list suppresses (its person was erased): nothing "
        "written; `POST /v4/lists/{listId}/suppressions/remove` takes an email back.",
    )
    invalid: int
    results: list[ImportResult]


class Health(BaseModel):
    status: str


class HealthData(BaseModel):
    data: Health


def envelope(name: str, model: type[BaseModel]) -> type[BaseModel]:
    """A `{"data": model}` response model named `name` for the OpenAPI document."""
    return type(name, (BaseModel,), {"__annotations__": {"data": model}, "__module__": __name__})


ContactResponse = envelope("ContactResponse", ContactData)
ContactsResponse = envelope("ContactsResponse", ContactsData)
SignUpResponse = envelope("SignUpResponse", SignUpData)
ListResponse = envelope("ListResponse", ListData)
CustomFieldResponse = envelope("CustomFieldResponse", CustomFieldData)
ListsResponse = envelope("ListsResponse", ListsData)
ProjectsResponse = envelope("ProjectsResponse", ProjectsData)
ActionResponse = envelope("ActionResponse", ActionData)
ActionsResponse = envelope("ActionsResponse", ActionsData)
ImportResponse = envelope("ImportResponse", ImportData)
