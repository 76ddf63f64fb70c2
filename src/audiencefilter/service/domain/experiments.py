"""Experiments on an audience: seeded random groups and a holdout, drawn per member.

An experiment splits an audience's members into named groups and a holdout by percent
(`{"holdoutPercent": 10, "groups": [{"name": "A", "percent": 45}, ...], "seed": "..."}`), so a
sender can mail group A one message, group B another, and nobody in the holdout, then compare.

**The draw.** A member's place is HMAC-SHA256 keyed by the seed over its contact id, read as a
number in [0, 1) and scaled to one of 10,000 equal slots; the holdout takes the first
`holdoutPercent` of them, then each group its share, in the order given. A keyed hash rather
than a random number: the draw of a contact is the same whoever computes it (a replay of the
feed, an export, another process), and a contact leaving and entering again lands in the same
group, so it never sees two arms of one experiment. The shares are those of a uniform draw:
within a fraction of a percent of the percents over many members (the tests hold 100,000 ids to
±1 point).

**Fixed once created.** The experiment is given when the audience is created and cannot change
afterwards: changing a percent or the seed would either move members who stay (they would see
two arms) or leave the split skewed, so a different experiment is a new audience.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ground.errors import Conflict, Invalid, RequestProblem

SLOTS = 10_000
_PER_PERCENT = SLOTS // 100
MAX_GROUPS = 20
SEED_BYTES = 12
INVALID = "The experiment is not valid"
_EXAMPLE = (
    '{"holdoutPercent": 10, "groups": [{"name": "A", "percent": 45}, {"name": "B", "percent": 45}]}'
)


@dataclass(frozen=True)
class Draw:
    """Where a member landed: a group's name, or the holdout (`group` None)."""

    group: str | None
    holdout: bool

    def view(self) -> dict[str, Any]:
        return {"group": self.group, "holdout": self.holdout}


NO_DRAW = Draw(None, False)
HOLDOUT = Draw(None, True)


@dataclass(frozen=True)
class Experiment:
    """An audience's experiment: its seed, its holdout and its groups (name, percent)."""

    seed: str
    holdout_percent: int
    groups: tuple[tuple[str, int], ...]

    def draw(self, contact_id: str) -> Draw:
        """The member's group, from the seed and its id alone."""
        digest = hmac.new(self.seed.encode(), contact_id.encode(), hashlib.sha256).digest()
        slot = (int.from_bytes(digest[:8], "big") * SLOTS) >> 64
        bound = self.holdout_percent * _PER_PERCENT
        if slot < bound:
            return HOLDOUT
        for name, percent in self.groups:
            bound += percent * _PER_PERCENT
            if slot < bound:
                return Draw(name, False)
        raise AssertionError("the percents sum to 100")  # checked when read

    def names(self) -> list[str]:
        return [name for name, _ in self.groups]

    def view(self) -> dict[str, Any]:
        """The experiment as the API shows it (and stores it, as canonical JSON)."""
        return {
            "seed": self.seed,
            "holdoutPercent": self.holdout_percent,
            "groups": [{"name": name, "percent": percent} for name, percent in self.groups],
        }

    def to_json(self) -> str:
        return json.dumps(self.view(), sort_keys=True, separators=(",", ":"))


def stored(text: str | None) -> Experiment | None:
    """The experiment stored with an audience (checked when it was created), or None."""
    if not text:
        return None
    value = json.loads(text)
    groups = tuple((group["name"], group["percent"]) for group in value["groups"])
    return Experiment(value["seed"], value["holdoutPercent"], groups)


@dataclass(frozen=True)
class Requested:
    """An experiment as a request sends it (types and bounds checked by its schema)."""

    seed: str | None
    holdout_percent: int
    groups: tuple[tuple[str, int], ...]

    def same_as(self, experiment: Experiment | None) -> bool:
        """Whether it asks for this experiment (any seed, when it names none)."""
        return (
            experiment is not None
            and (self.holdout_percent, self.groups)
            == (experiment.holdout_percent, experiment.groups)
            and self.seed in (None, experiment.seed)
        )


def read(requested: Requested) -> Experiment:
    """An experiment from a request: the percents, the holdout's included, must sum to 100 and
    the names be unique. Without a seed, a random one is drawn and shown, so the draws can be
    checked later.

    Raises:
        Invalid: naming where each problem is, with what was expected and found.
    """
    seed, holdout_percent, groups = requested.seed, requested.holdout_percent, requested.groups
    issues = _duplicates(groups)
    total = holdout_percent + sum(percent for _, percent in groups)
    if total != 100:
        issues.append(
            RequestProblem(
                ("experiment",),
                "the holdout's and the groups' percents must sum to 100",
                expected="holdoutPercent + the groups' percents = 100",
                found=f"{holdout_percent} + {sum(p for _, p in groups)} = {total}",
                suggestion=f"for instance {_EXAMPLE}",
            )
        )
    if issues:
        raise Invalid(INVALID, errors=issues)
    return Experiment(seed or secrets.token_urlsafe(SEED_BYTES), holdout_percent, groups)


def fixed(stored_text: str | None) -> Conflict:
    """The refusal of an update that would change (or add, or end) an audience's experiment."""
    now = "its experiment" if stored_text else "no experiment"
    return Conflict(
        "An audience's experiment is fixed when the audience is created",
        errors=[
            RequestProblem(
                ("experiment",),
                "changing the experiment would move members who stay from one group to "
                "another, or skew the split",
                expected=f"the audience's own experiment ({now}), or no `experiment` field",
                found="a different experiment",
                suggestion="create a new audience with this filter and experiment: its members "
                "are drawn as they enter",
            )
        ],
    )


def _duplicates(groups: Sequence[tuple[str, int]]) -> list[RequestProblem]:
    seen: dict[str, int] = {}
    issues = []
    for index, (name, _) in enumerate(groups):
        first = seen.setdefault(name.casefold(), index)
        if first != index:
            issues.append(
                RequestProblem(
                    ("experiment", "groups", index, "name"),
                    "group names must be unique (ignoring case)",
                    expected="a name no other group has",
                    found=f'"{name}", as group {first} is named',
                    suggestion=f'rename it, e.g. "{name}{index + 1}"',
                )
            )
    return issues


def unknown_group(name: str, experiment: Experiment | None) -> Invalid:
    """The refusal of a `group` query naming no group of the audience's experiment."""
    names = experiment.names() if experiment else []
    expected = ", ".join(f'"{n}"' for n in names) if names else "an audience with an experiment"
    return Invalid(
        "No such group in this audience's experiment",
        errors=[
            RequestProblem(
                ("group",),
                "the group is not one of the audience's experiment",
                expected=expected,
                found=f'"{name}"',
                suggestion="use `holdout=true` for the holdout"
                if names
                else "create the audience with an `experiment` to split its members",
                part="query",
            )
        ],
    )
