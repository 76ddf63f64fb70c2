"""Schemas of experiments and of an audience's members listing (`GET /audiences/{id}/members`).

Types and bounds are checked here, so the document states them; what a schema cannot say (the
percents summing to 100, unique names) is checked by `domain/experiments.py`, which names the
place of each problem as these checks do.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from ...domain import experiments
from ...ground.fields import QueryBool
from .resources import envelope

GROUP_NAME = r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$"
GroupName = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=GROUP_NAME)]
Seed = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[\x21-\x7e]+$")]
EXPERIMENT_EXAMPLE: dict[str, Any] = {
    "holdoutPercent": 10,
    "groups": [{"name": "A", "percent": 45}, {"name": "B", "percent": 45}],
    "seed": "spring-launch",
}
# A contact id: only the characters ids are made of ever reach the database.
Cursor = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MEMBERS_LIMIT = 100
# Read by the use case, which names what it found; the document says what it expects.
Instant = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
MAX_MEMBERS_LIMIT = 1000


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class GroupIn(_Strict):
    """One arm of an experiment: its name and the percent of members drawn into it."""

    name: GroupName = Field(description="Unique in the experiment (ignoring case), e.g. `A`.")
    percent: int = Field(ge=1, le=100, description="Whole percent of the members, 1 to 100.")


class ExperimentIn(_Strict):
    """Seeded random groups and a holdout, drawn for each member as it enters."""

    model_config = ConfigDict(json_schema_extra={"examples": [dict(EXPERIMENT_EXAMPLE)]})

    holdoutPercent: int = Field(
        default=0, ge=0, le=99, description="Whole percent of the members held out (no sends)."
    )
    groups: list[GroupIn] = Field(
        min_length=1,
        max_length=experiments.MAX_GROUPS,
        description="The arms, in order; their percents and `holdoutPercent` sum to 100.",
    )
    seed: Seed | None = Field(
        default=None,
        description="Keys the draw (HMAC-SHA256 of the contact id): the same seed draws the "
        "same groups anywhere. Drawn at random when not given, and shown.",
    )

    def requested(self) -> experiments.Requested:
        groups = tuple((group.name, group.percent) for group in self.groups)
        return experiments.Requested(self.seed, self.holdoutPercent, groups)


class GroupOut(BaseModel):
    name: str
    percent: int


class ExperimentOut(BaseModel):
    """An audience's experiment, fixed since the audience was created."""

    holdoutPercent: int
    groups: list[GroupOut]
    seed: str


class MembersQuery(BaseModel):
    """Which members of an audience to list, and from where."""

    model_config = ConfigDict(extra="forbid")

    at: Instant | None = Field(
        default=None,
        description="An RFC 3339 instant, e.g. `2026-05-01T09:30:00Z`: the members at that "
        "instant, the replay of the audience's `audience.entered` / `audience.left` events "
        "dated up to it, in the feed's order. Empty before the audience existed; an instant "
        "in the future is refused. Without it: the members now.",
        examples=["2026-05-01T09:30:00Z"],
    )
    after: Cursor | None = Field(
        default=None,
        description="The `next` of the previous page: members after that contact id.",
    )
    limit: int = Field(
        default=MEMBERS_LIMIT,
        ge=1,
        le=MAX_MEMBERS_LIMIT,
        description="How many members a page holds (1 to 1000; default 100).",
    )
    group: GroupName | None = Field(
        default=None, description="Only the members drawn into this group of the experiment."
    )
    holdout: QueryBool | None = Field(
        default=None,
        description="`false`: only the members a sender may mail (the holdout left out); "
        "`true`: only the holdout.",
    )


class MemberOut(BaseModel):
    contactId: str
    enteredAt: datetime = Field(description="When it entered, the latest time (up to `at`).")
    group: str | None = Field(description="Its group in the experiment; null in the holdout.")
    holdout: bool = Field(description="Whether it is held out: senders skip it.")


class MembersData(BaseModel):
    audienceId: str
    at: datetime | None = Field(description="The instant asked for, or null: now.")
    version: int | None = Field(
        description="The audience's version in force then (`/v4/audiences/{id}/versions`): the "
        "last recorded up to `at` (now without it); null before the first kept."
    )
    members: list[MemberOut] = Field(description="In contact id order.")
    next: str | None = Field(description="Pass as `after` for the next page; null at the end.")
    hasMore: bool


MembersPage = envelope("MembersPage", MembersData)
