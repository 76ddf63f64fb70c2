"""Request and response schemas of the audience routes.

The specification fixes messages for a missing name or listId and for missing or empty filters,
so those fields are lax in the models (absent, `null` and `""` reach the handler, which answers
the spec's message) while the published schema states what a valid request holds: `name` and
`listId` required and non-empty. `filters` is a string holding a where clause, or the where
object itself; the document describes the object with the filter library's JSON Schema
(components `WhereClause` and `Where*`, added by `api/openapi.py`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from ...ground.bodies import optional
from ...ground.fields import ONE_LINE, FilterText, Identifier, Name, QueryBool, ShortText
from .experiments import ExperimentIn, ExperimentOut
from .resources import (
    MAX_LIMIT,
    ContactOut,
    Order,
    PageQuery,
    Pagination,
    SortKey,
    envelope,
)

AudienceMode = Literal["manual", "smart"]
WHERE_REF = {"$ref": "#/components/schemas/WhereClause"}
FILTERS_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {
            "type": "string",
            "description": "A where clause as JSON text, e.g. "
            '`{"points": {"gte": 100}, "country": {"in": ["FR", "DE"]}}`.',
            "contentMediaType": "application/json",
            "contentSchema": WHERE_REF,
        },
        WHERE_REF,
        {"type": "null"},
    ],
    "description": "The filter of a smart audience: a where clause over contact fields, as a "
    "JSON string or as an object. Stored and returned as its canonical JSON string.",
}
FILTERS_TEXT_DESCRIPTION = (
    "The filter in the readable text syntax instead, e.g. "
    '`points >= 100 and country in ["FR", "DE"]`.'
)
MAX_MEMBERS_PER_CALL = 1000
PREVIEW_LIMIT = 100

Filters = Annotated[Any, WithJsonSchema(FILTERS_SCHEMA)]
RequiredName = Annotated[
    ShortText | None,
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 255, "pattern": ONE_LINE}),
]
RequiredListId = Annotated[
    ShortText | None,
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 64, "pattern": ONE_LINE}),
]


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


FiltersFormat = Literal["json", "jsonlogic", "mongodb", "react-querybuilder", "sql", "cel"]
FILTERS_FORMAT_DESCRIPTION = (
    "The format `filters` is written in (default `json`, the where clause): a JsonLogic rule, "
    "a MongoDB query, a react-querybuilder rule group, a SQL WHERE condition or a CEL "
    "expression (docs/interop.md). The audience stores the filter read from it, as canonical JSON."
)
FILTERS_AS_DESCRIPTION = (
    "Also answer the filter in this format as `filtersAs`: a format of docs/interop.md, or "
    "`english`, a sentence for people (a filter the format cannot say is a 400)."
)
EXPERIMENT_DESCRIPTION = (
    "Split the members into seeded random groups and a holdout, e.g. "
    '`{"holdoutPercent": 10, "groups": [{"name": "A", "percent": 45}, '
    '{"name": "B", "percent": 45}]}`. Each member is drawn when it enters, from the seed and '
    "its contact id, and keeps its group while it stays; members pages, exports and "
    "`audience.entered` events show it. Fixed once the audience is created."
)
OutFormat = Literal[
    "json", "text", "jsonlogic", "mongodb", "react-querybuilder", "sql", "cel", "english"
]


class FilterOfList(_Body):
    """A filter of one list, in any of the ways a request may write one: the fields a preview,
    an estimate and a comparison take alike, declared once so their documents stay alike."""

    model_config = ConfigDict(json_schema_extra={"required": ["listId"]})

    listId: RequiredListId = optional()
    filters: Filters = optional()
    filtersText: FilterText | None = optional(FILTERS_TEXT_DESCRIPTION)
    filtersFormat: FiltersFormat | None = optional(FILTERS_FORMAT_DESCRIPTION)


class AudienceCreate(_Body):
    """A new audience. Without `mode`: `smart` when filters are given, else `manual`."""

    model_config = ConfigDict(json_schema_extra={"required": ["name", "listId"]})

    name: RequiredName = optional()
    listId: RequiredListId = optional()
    mode: AudienceMode = optional()
    filters: Filters = optional()
    filtersText: FilterText | None = optional(FILTERS_TEXT_DESCRIPTION)
    filtersFormat: FiltersFormat | None = optional(FILTERS_FORMAT_DESCRIPTION)
    experiment: ExperimentIn | None = optional(EXPERIMENT_DESCRIPTION)


class AudienceUpdate(_Body):
    """Fields to change. `mode` may change too; a manual audience keeps its filters unused."""

    name: Name = optional()
    mode: AudienceMode = optional()
    filters: Filters = optional()
    filtersText: FilterText | None = optional(FILTERS_TEXT_DESCRIPTION)
    filtersFormat: FiltersFormat | None = optional(FILTERS_FORMAT_DESCRIPTION)
    experiment: ExperimentIn | None = optional(
        "The audience's own experiment may be sent again (without `seed`, or with its own); "
        "any other, or null when it has one, is a 409: an experiment is fixed at creation."
    )


class AudiencePreview(FilterOfList):
    """A smart audience to try without saving it."""

    explainContactId: Identifier | None = optional(
        "A contact of the list: the answer's `explanation` says why it is in or out."
    )


class MembersAdd(_Body):
    """Contacts of the audience's list to add to a manual audience (already there: kept)."""

    contactIds: Annotated[list[Identifier], Field(min_length=1, max_length=MAX_MEMBERS_PER_CALL)]


class SubsQuery(PageQuery):
    """Paging and order of an audience's `subs`; the default is the whole audience."""

    sort: SortKey | None = None
    order: Order = "desc"
    filtersAs: OutFormat | None = Field(default=None, description=FILTERS_AS_DESCRIPTION)


class WriteQuery(SubsQuery):
    """A create's or an update's `subs`, and whether to wait for a large list's build."""

    wait: QueryBool = Field(
        default=False,
        description="`true`: build the members within the request whatever the list's size "
        "(the answer is then `built`); by default a list larger than the service's "
        "`AUDIENCEFILTER_AUDIENCE_BUILD_BACKGROUND_ABOVE` answers at once, `building`.",
    )


class AudienceListQuery(PageQuery):
    listId: Annotated[str, Field(min_length=1, max_length=255)]


class PreviewQuery(BaseModel):
    limit: int = Field(default=PREVIEW_LIMIT, ge=1, le=MAX_LIMIT)
    page: int = Field(default=1, ge=1, le=2**31 - 1)
    sort: SortKey | None = None
    order: Order = "desc"
    filtersAs: OutFormat | None = Field(default=None, description=FILTERS_AS_DESCRIPTION)


# ---- responses -------------------------------------------------------------------------------


class Warning(BaseModel):
    """Advice about a request that succeeded."""

    code: Literal["unsatisfiable"]
    message: str


class BuildProgress(BaseModel):
    """How far a background build is."""

    done: int = Field(description="Contacts of the list judged so far.")
    total: int = Field(description="Contacts of the list to judge.")


class _AudienceBase(BaseModel):
    status: Literal["built", "building"] = Field(
        description="`building` while a smart audience created or changed on a large list is "
        "built in the background: its stored members (`subs`, `subsCount`) and their "
        "`audience.entered`/`audience.left` events wait for the build's end, when it turns "
        "`built`; `built` otherwise."
    )
    progress: BuildProgress | None = Field(
        description="While `building`: the contacts judged so far of the list's; null once built."
    )
    id: str
    name: str
    filters: str | None = Field(description="The filter as canonical JSON text, or null.")
    filtersText: str | None = Field(description="The same filter in the text syntax, or null.")
    mode: AudienceMode
    listId: str
    experiment: ExperimentOut | None = Field(
        default=None, description="The experiment drawing its members' groups, or null."
    )
    createdAt: datetime
    updatedAt: datetime


class AudienceOut(_AudienceBase):
    subs: list[ContactOut] = Field(description="The contacts in the audience now (this page).")
    filtersAs: Any = Field(default=None, description="The filter in the format `filtersAs` asked.")


class AudienceSummary(_AudienceBase):
    subsCount: int = Field(description="How many contacts are in the audience now.")


class AudienceData(BaseModel):
    audience: AudienceOut
    pagination: Pagination


class AudienceChangeData(AudienceData):
    warnings: list[Warning]


class AudiencesData(BaseModel):
    audiences: list[AudienceSummary]
    pagination: Pagination


class DeletedAudienceData(BaseModel):
    audience: AudienceSummary


class ExplanationNode(BaseModel):
    """One condition or group of a filter, judged for one contact."""

    outcome: Literal["TRUE", "FALSE", "UNKNOWN"] = Field(
        description="The node's value for the contact; UNKNOWN when a null was compared."
    )
    label: str = Field(
        description="The condition in the text syntax, or `all of`, `any of`, `not`."
    )
    seen: str = Field(description="The value the condition read (`points = 42`), or empty.")
    words: str = Field(
        default="",
        description="The same value in a person's words: the list's field labels "
        "(`Birthday = 1990-05-01` where `seen` says `data.birthday = 1990-05-01`) and the "
        "related rows that decided a behaviour by name and day (`share on 2026-11-24`), an "
        "audience by its name, where `seen` gives their ids; empty where `seen` is.",
    )
    children: list[ExplanationNode] | None = Field(
        default=None, description="A group's items; null for a condition."
    )


class ExplanationOut(ExplanationNode):
    """The whole filter judged for one contact: TRUE means the contact is in the audience."""

    contactId: str


class PreviewData(BaseModel):
    count: int = Field(description="How many contacts the filter selects now.")
    contacts: list[ContactOut]
    pagination: Pagination
    filters: str = Field(description="The filter as canonical JSON text.")
    filtersText: str
    filtersAs: Any = Field(default=None, description="The filter in the format `filtersAs` asked.")
    warnings: list[Warning]
    explanation: ExplanationOut | None = Field(
        default=None,
        description="With `explainContactId`: why that contact is in or out (the library's "
        "`Filter.explain`); otherwise null.",
    )


class MembersChange(BaseModel):
    audienceId: str
    added: list[str] | None = Field(default=None, description="Contacts that were not members.")
    removed: list[str] | None = None
    total: int = Field(description="Members of the audience after the change.")


AudienceResponse = envelope("AudienceResponse", AudienceData)
AudienceChangeResponse = envelope("AudienceChangeResponse", AudienceChangeData)
AudiencesResponse = envelope("AudiencesResponse", AudiencesData)
DeletedAudienceResponse = envelope("DeletedAudienceResponse", DeletedAudienceData)
PreviewResponse = envelope("PreviewResponse", PreviewData)
MembersResponse = envelope("MembersResponse", MembersChange)
