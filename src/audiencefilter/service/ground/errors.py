"""The refusals of the service's rules, at the ground floor: the domain (and `db/`) raise them,
and `http/errors.py` alone turns them into responses. They name no HTTP status: the kind of
refusal does (`NotFound`, `Conflict`, `Invalid`, `Forbidden`, `Unprocessable`), and the
mapping to statuses lives with the handlers. Neither floor imports the other for them.

`ValidationIssue` is one problem of a request, `FilterProblem` one problem of a filter as the
filter library reports it; every error body (`Envelope`: `Error`, or `RuleError` for the
interface's audience rules) carries both kinds in one list, `errors`. The domain says where
a problem is with a `RequestProblem` (a path of keys and indices in the request's body or
query), never with a JSON pointer: `http/errors.py` writes the pointer (`/body/contactIds/3`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field


class ValidationIssue(BaseModel):
    """One problem found in the request."""

    pointer: str = Field(description="Where: a JSON pointer into the request, e.g. `/body/email`.")
    detail: str = Field(description="The problem in one sentence.")
    expected: str | None = Field(default=None, description="What the service expected there.")
    found: str | None = Field(default=None, description="What it found instead.")
    suggestion: str | None = Field(
        default=None, description='Advice, such as `did you mean "email"?` for an unknown field.'
    )
    path: str | None = Field(
        default=None,
        description="For a problem of a filter: where in the filter, e.g. `OR[1].points.gte` "
        "(empty: the top level).",
    )
    line: int | None = Field(default=None, description="For a filter's text: 1-based line.")
    column: int | None = Field(default=None, description="For a filter's text: 1-based column.")


class FilterProblem(BaseModel):
    """One problem of a filter, as the filter library reports it."""

    path: str = Field(description="Where in the filter, e.g. `OR[1].points.gte`; empty: top.")
    message: str
    suggestion: str | None = None
    line: int | None = Field(default=None, description="1-based, for text input.")
    column: int | None = Field(default=None, description="1-based, for text input.")


class Envelope(BaseModel):
    """What every error body carries, whatever refused the request: its status, its message
    and, when the request has problems, each of them. Optional in the schemas only so that the
    specification's `Error` keeps its two required fields; the service always sends `status`
    and `detail`."""

    status: int | None = Field(default=None, description="The HTTP status (always sent).")
    detail: str | None = Field(
        default=None, description="What was refused and why, in one message (always sent)."
    )
    errors: list[ValidationIssue] | None = Field(
        default=None, description="Each problem of the request: where it is and what is wrong."
    )


class Error(Envelope):
    """The body of every error response but the interface's string form: the specification's
    `error` (the HTTP status, a number) and `message`, in the one envelope."""

    error: int
    message: str


class RuleError(Envelope):
    """The interface's other form, for the audience rules it names (`STRING_FORM`): `error` is
    the message itself and there is no `message`, in the one envelope (`status` and `detail`
    as every body has them); an invalid filter adds its problems in `errors` and, for one
    release, in the deprecated `details`."""

    error: str = Field(description="The rule broken, e.g. `Name and listId are required`.")
    details: list[FilterProblem] | None = Field(
        default=None,
        deprecated=True,
        description="Deprecated, for one release: the filter's problems, which `errors` also "
        "lists (with `pointer`, and `detail` for `message`).",
    )


Location = tuple[str | int, ...]
"""A place in a document: its keys and list indices from the top, e.g. `("contactIds", 3)`."""


def pointer(location: Iterable[str | int]) -> str:
    """A JSON pointer (RFC 6901) for a location: `http/errors.py` writes a request's with it
    (`/body/email`), the domain a place in an import row's result (`/data/birthday`)."""
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in location]
    return "/" + "/".join(parts) if parts else ""


@dataclass(frozen=True)
class RequestProblem:
    """One problem of a request where the domain found it: `at`, a path in the request's
    `part` (its JSON body, or its query). The domain knows the request's document, not HTTP's
    wording for it: the HTTP floor writes the path as a JSON pointer (`/body/contactIds/3`),
    escaping each key once, and otherwise keeps `detail`, `expected`, `found` and `suggestion`
    as `ValidationIssue` has them."""

    at: Location
    detail: str
    expected: str | None = None
    found: str | None = None
    suggestion: str | None = None
    part: Literal["body", "query"] = "body"


class DomainError(Exception):
    """A request the service's rules refuse: the message says what and why, `errors` where.

    `cited`: the message goes on with each problem, where and what (`Invalid request:
    /body/eventTypes: expected each event type once`), as the HTTP floor writes them.
    """

    def __init__(
        self, message: str, *, errors: Sequence[RequestProblem] = (), cited: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errors = list(errors)
        self.cited = cited


class Invalid(DomainError):
    """The request breaks a rule by itself: a value of the wrong type or out of bounds."""


class Forbidden(DomainError):
    """The caller may not do this, whatever the data holds."""


class NotFound(DomainError):
    """Nothing the caller owns has this id; another tenant's ids are not found either."""


class Conflict(DomainError):
    """The data as it stands refuses the request: a taken name, a bound reached, a reference."""


class Unprocessable(DomainError):
    """A valid request whose effect the data cannot hold (a counter past its range)."""


NAME_AND_LIST_REQUIRED = "Name and listId are required"
FILTERS_REQUIRED = "Filters are required for smart mode"
FILTERS_EMPTY = "Filters cannot be empty for smart mode"
INVALID_FILTERS = "Invalid filters: the value must be a valid where clause for the contact model"
STRING_FORM = frozenset({NAME_AND_LIST_REQUIRED, FILTERS_REQUIRED, FILTERS_EMPTY, INVALID_FILTERS})
"""The rules the interface answers in its string form (`RuleError`): `error` holds the message,
and there is no `message`. Every other refusal, an audience rule of the service's own
included, has the schema's form (`Error`)."""


class AudienceRuleError(Invalid):
    """An audience rule was broken, with the filter's problems when it has any; `field` is the
    request's field they are about. The interface's own rules (`STRING_FORM`) are answered in
    its string form, whoever raises them."""

    def __init__(
        self, message: str, details: Sequence[dict[str, Any]] = (), field: str = "filters"
    ) -> None:
        super().__init__(message)
        self.details = list(details)
        self.field = field

    @property
    def string_form(self) -> bool:
        """Whether the interface answers this rule with `error` the message (`RuleError`)."""
        return self.message in STRING_FORM


def not_found(what: str) -> NotFound:
    return NotFound(f"{what} not found")
