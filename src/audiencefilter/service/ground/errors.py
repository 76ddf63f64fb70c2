"""The errors the service answers on purpose, at the ground floor: the domain raises them, and
`http/errors.py` turns them into responses. Neither floor imports the other for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


class Error(BaseModel):
    """The body of every error response."""

    error: int
    message: str
    errors: list[ValidationIssue] | None = None


class FilterProblem(BaseModel):
    """One problem of a filter, as the filter library reports it."""

    path: str = Field(description="Where in the filter, e.g. `OR[1].points.gte`; empty: top.")
    message: str
    suggestion: str | None = None
    line: int | None = Field(default=None, description="1-based, for text input.")
    column: int | None = Field(default=None, description="1-based, for text input.")


class RuleError(BaseModel):
    """An audience rule of the specification was broken: `error` is the message itself."""

    error: str
    details: list[FilterProblem] | None = None


class AudienceRuleError(Exception):
    """A 400 in the specification's string form, with the filter's problems when it has any."""

    def __init__(self, message: str, details: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.details = list(details)


class ApiError(Exception):
    """An error the service answers on purpose, with its status and message."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: Sequence[ValidationIssue] = (),
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = list(errors)
        self.headers = headers or {}


def not_found(what: str) -> ApiError:
    return ApiError(404, f"{what} not found")
