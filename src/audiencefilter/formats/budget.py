"""What the readers of other formats share: problems gathered at a path, and the limits of one
read (`language/limits.py`), so a hostile input ends in a `FilterError`, never in a
`RecursionError` or unbounded work.

A format reader walks a structure of its own (react-querybuilder's rule groups, sqlglot's
syntax tree) and builds each condition through `language/conditions.py`; this module holds the
two things every such walk needs besides: where a problem is, and how much more the read may
take.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import FilterError, Issue, join_path
from ..language.conditions import Report, Where
from ..language.limits import DEFAULT_LIMITS, Limits

Place = str
"""Where a problem is: a path such as `rules[1].rules[0].value`, or `""` for the top."""


def child(path: Place, key: str | int) -> Place:
    """`rules[1]` + `value` -> `rules[1].value`; an index is written in brackets."""
    return f"{path}[{key}]" if isinstance(key, int) else join_path(path, key)


class Budget:
    """The problems of one read and what is left of its limits (depth, conditions).

    Readers keep going after a problem, so one `FilterError` lists everything wrong at once;
    once the read is over its node limit, it stops adding conditions (reported once).
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.issues: list[Issue] = []
        self.nodes = 0
        self.too_big = False
        self.locate: Callable[[Place], tuple[int, int] | None] = lambda _path: None

    def add(self, path: Place, message: str, suggestion: str | None = None) -> None:
        """Record one problem at `path` (with its line and column where the reader knows it)."""
        spot = self.locate(path)
        line, column = spot if spot is not None else (None, None)
        self.issues.append(
            Issue(path=path, message=message, suggestion=suggestion, line=line, column=column)
        )

    def report(self, path: Place) -> Report:
        """A report for the condition builder, whose places are relative to `path`."""

        def report(where: Where, message: str, suggestion: str | None) -> None:
            place = path
            for key in where or ():
                place = child(place, key)
            self.add(place, message, suggestion)

        return report

    def count(self, path: Place) -> bool:
        """Count one condition or group; False once the read is over the node limit."""
        self.nodes += 1
        if self.nodes <= self.limits.max_nodes:
            return True
        if not self.too_big:
            self.too_big = True
            self.add(
                path,
                f"the filter has more than {self.limits.max_nodes} conditions",
                "split it into several audiences, or use in lists",
            )
        return False

    def deeper(self, path: Place, depth: int) -> bool:
        """Whether a group at `depth` is within the nesting limit (reported if not)."""
        if depth <= self.limits.max_depth:
            return True
        self.add(
            path,
            f"groups are nested deeper than {self.limits.max_depth} levels",
            "flatten the nesting: a group takes any number of rules",
        )
        return False

    def raise_if_any(self, source: str | None = None) -> None:
        """Raise the one `FilterError` of the read, if it found any problem."""
        if self.issues:
            raise FilterError(self.issues, source=source)


def refuse(path: Place, message: str, suggestion: str | None = None) -> FilterError:
    """The error of a writer meeting a node with no faithful form in its format."""
    return FilterError([Issue(path=path, message=message, suggestion=suggestion)])
