"""Request and response schemas of the audience analyses: overlap, estimate and compare.

The filters of an estimate or of a compared side are read like a preview's (`filters` as a
where clause or another format, or `filtersText`), so their fields are the preview's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...ground.bodies import optional
from ...ground.fields import FilterText, Identifier
from .audiences import (
    FILTERS_FORMAT_DESCRIPTION,
    FILTERS_TEXT_DESCRIPTION,
    FilterOfList,
    Filters,
    FiltersFormat,
)
from .resources import envelope

MAX_OVERLAP_AUDIENCES = 50
AUDIENCES_DESCRIPTION = (
    f"Up to {MAX_OVERLAP_AUDIENCES} audiences of the list, by id, separated by commas; the "
    "matrix follows their order (an id given twice counts once)."
)


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class OverlapQuery(BaseModel):
    audiences: Annotated[str, Field(min_length=1, max_length=4000)] = Field(
        description=AUDIENCES_DESCRIPTION
    )


class OverlapData(BaseModel):
    listId: str
    audiences: list[str] = Field(description="The audiences, in the order the matrix uses.")
    sizes: list[int] = Field(description="How many members each audience has.")
    matrix: list[list[int]] = Field(
        description="`matrix[i][j]`: the contacts in both the i-th and the j-th audience (the "
        "diagonal holds the sizes), from the stored membership."
    )
    building: list[str] = Field(
        description="Those of the audiences still being built: their members, and so their "
        "counts, are not all stored yet."
    )


class EstimateRequest(FilterOfList):
    """A filter whose size on a list to estimate, without saving anything."""

    exact: bool = Field(default=False, description="`true`: also count the filter exactly.")


class EstimateData(BaseModel):
    estimate: int = Field(description="The estimated number of contacts the filter selects.")
    low: int = Field(description="The 95 % interval's lower bound (included).")
    high: int = Field(description="The 95 % interval's upper bound (included).")
    confidence: float = Field(description="The interval's confidence level: 0.95.")
    sampleSize: int = Field(description="The contacts of the sample the filter was judged on.")
    sampleMatches: int = Field(description="How many of the sample the filter selects.")
    listSize: int = Field(description="How many contacts the list holds.")
    exact: int | None = Field(
        description="With `exact: true`, the exact number of contacts selected; else null."
    )
    filters: str = Field(description="The filter as canonical JSON text.")
    filtersText: str


class CompareSide(_Body):
    """One side of a comparison: a saved audience, or a filter of the list."""

    audienceId: Identifier | None = optional("A saved audience, by id.")
    filters: Filters = optional()
    filtersText: FilterText | None = optional(FILTERS_TEXT_DESCRIPTION)
    filtersFormat: FiltersFormat | None = optional(FILTERS_FORMAT_DESCRIPTION)


class CompareRequest(_Body):
    """Two audiences or filters of one list to compare."""

    model_config = ConfigDict(json_schema_extra={"required": ["a", "b"]})

    listId: Identifier | None = optional(
        "The list the filters are of; needed when neither side is a saved audience."
    )
    a: CompareSide | None = optional("The first side.")
    b: CompareSide | None = optional("The second side.")


Relation = Literal["equivalent", "subset", "superset", "overlap", "disjoint", "unknown"]


class ComparedSide(BaseModel):
    audienceId: str | None = Field(description="The saved audience, or null for a filter.")
    filters: str | None = Field(description="Its filter as canonical JSON text, or null.")


class CompareCounts(BaseModel):
    both: int = Field(description="Contacts in both now.")
    aOnly: int = Field(description="Contacts in `a` and not in `b` now.")
    bOnly: int = Field(description="Contacts in `b` and not in `a` now.")


class CompareWitnesses(BaseModel):
    both: dict[str, Any] | None = Field(description="A contact both filters select, if proven.")
    aOnly: dict[str, Any] | None = Field(description="A contact `a` selects and `b` does not.")
    bOnly: dict[str, Any] | None = Field(description="A contact `b` selects and `a` does not.")


class CanMatch(BaseModel):
    holds: bool | None = Field(
        description="Whether the side can select anyone: false is a proof that no contact, "
        "present or future, can be in it; null when not decided (or a manual audience)."
    )
    reason: str = Field(
        description="Why: a proof that it cannot match names the conditions that cannot hold "
        "together."
    )
    witness: dict[str, Any] | None = Field(
        description="An example contact (made up) the side selects, when `holds` is true."
    )


class CanMatchSides(BaseModel):
    a: CanMatch
    b: CanMatch


class CompareData(BaseModel):
    listId: str
    relation: Relation = Field(
        description="What the definitions say of every contact, present or future: `a` and "
        "`b` select the same contacts (`equivalent`), `a`'s are all `b`'s (`subset`) or the "
        "other way round (`superset`), they can share a contact and each has its own "
        "(`overlap`), they never share one (`disjoint`), or not decided (`unknown`)."
    )
    reason: str = Field(description="Why the relation holds or could not be decided.")
    witnesses: CompareWitnesses = Field(
        description="Example contacts (made up, not stored ones) that prove a region can hold "
        "someone, each checked against both filters; null where none is known."
    )
    counts: CompareCounts = Field(description="The stored contacts in each region now.")
    a: ComparedSide
    b: ComparedSide
    canMatch: CanMatchSides = Field(description="Whether each side can select anyone at all.")


OverlapResponse = envelope("OverlapResponse", OverlapData)
EstimateResponse = envelope("EstimateResponse", EstimateData)
CompareResponse = envelope("CompareResponse", CompareData)
