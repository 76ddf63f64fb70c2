"""Bounds on what one filter may ask of the parser and the back-ends.

Hostile or runaway input must end in a `FilterError`, never in a `RecursionError`, a
multi-second parse or a multi-megabyte SQL statement, so every reader checks these.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FilterError, Issue


@dataclass(frozen=True, slots=True)
class Limits:
    """Configurable bounds; the defaults are those of the filter semantics.

    Attributes:
        max_depth: Nesting of AND/OR/NOT groups and field-level `not`.
        max_nodes: Conditions and groups in one filter.
        max_array: Values in one `in`/`notIn` array.
        max_text: Size of a filter text in bytes (UTF-8).
    """

    max_depth: int = 32
    max_nodes: int = 10_000
    max_array: int = 10_000
    max_text: int = 256 * 1024


DEFAULT_LIMITS = Limits()


def check_text_size(size: int, limits: Limits) -> None:
    """Refuse a filter text of `size` UTF-8 bytes over `limits.max_text`, before any parsing:
    both readers (JSON and text) call this, so the limit and its message are one.

    Raises:
        FilterError: the text is too long.
    """
    if size > limits.max_text:
        message = f"the filter text is {size} bytes, over the limit of {limits.max_text}"
        raise FilterError(
            [Issue(path="", message=message, suggestion="split the audience or shorten lists")]
        )
