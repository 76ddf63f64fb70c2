"""Strict JSON decoding for the where clause: the first step of reading a filter from text.

Stricter than `json.loads` in three ways, each reported as a `FilterError` at the top level:
- a repeated key is not silently dropped: the object is flagged (`DuplicateKeys`) so the
  walker can report the key at its path;
- `NaN`, `Infinity` and `-Infinity` are refused: no back-end can compare with them;
- the text's size is bounded by `Limits.max_text` before any decoding starts, and nesting too
  deep for the decoder ends in an issue, not a `RecursionError`.

Text that is not JSON but reads like the text syntax (`points >= 100`) gets a suggestion to
use `parse_text`: it is the most common mistake of a first call.

The decoder is built once: `json.loads` with hooks builds a new decoder on every call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..errors import FilterError, Issue
from ..language.limits import DEFAULT_LIMITS, Limits, check_text_size
from ..language.values import InexactNumber, decimal_numeral


class DuplicateKeys(dict[str, Any]):
    """A decoded JSON object that had repeated keys; the walker reports them at their path."""

    duplicates: tuple[str, ...] = ()


class _NonFiniteNumber(ValueError):
    pass


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    flagged = DuplicateKeys(obj)
    seen: set[str] = set()
    repeated = []
    for key, _ in pairs:
        if key in seen:
            repeated.append(key)
        seen.add(key)
    flagged.duplicates = tuple(repeated)
    return flagged


def _reject_constant(name: str) -> Any:
    raise _NonFiniteNumber(name)


Scanner = Callable[[str, int], tuple[Any, int]]
"""A decoder's `scan_once`: one JSON value from an offset, and the offset after it."""

_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_pairs,
    parse_constant=_reject_constant,
    parse_float=decimal_numeral,
)
_SCAN: Scanner = _DECODER.scan_once  # type: ignore[attr-defined]
#: Without the duplicate-key hook, for the fast reader, which rules out repeats by counting.
PLAIN_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=decimal_numeral)
SCAN_PLAIN: Scanner = PLAIN_DECODER.scan_once  # type: ignore[attr-defined]
#: What `json` skips between tokens.
SKIP_SPACE = re.compile(r"[ \t\n\r]*").match


def _decode(text: str | bytes) -> Any:
    """`json.loads` with the hooks above, same results and errors.

    Plain text goes straight to the prebuilt decoder's scanner, as `JSONDecoder.decode` would
    after the checks `json.loads` makes; anything else takes `json.loads` itself.
    """
    if type(text) is not str or text.startswith("\ufeff"):
        return json.loads(
            text,
            object_pairs_hook=_object_pairs,
            parse_constant=_reject_constant,
            parse_float=decimal_numeral,
        )
    try:
        value, end = _SCAN(text, SKIP_SPACE(text, 0).end())  # type: ignore[union-attr]
    except StopIteration as err:
        raise json.JSONDecodeError("Expecting value", text, err.value) from None
    end = SKIP_SPACE(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def fits(text: str, limits: Limits) -> bool:
    """True if `text` is surely within `max_text` without encoding it (UTF-8: <= 4 bytes a
    character)."""
    return len(text) * 4 <= limits.max_text


def load_json(text: str | bytes, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Strict JSON decoding: no NaN/Infinity, no repeated keys (flagged for the walker).

    Raises:
        FilterError: the text is too large or is not JSON.
    """
    if isinstance(text, bytes):
        size = len(text)
    elif fits(text, limits):
        size = 0
    else:
        size = len(text.encode("utf-8", "surrogatepass"))
    check_text_size(size, limits)
    try:
        return _decode(text)
    except json.JSONDecodeError as exc:
        issue = Issue(
            path="",
            message=f"invalid JSON: {exc.msg}",
            suggestion=_text_syntax_hint(exc.doc),
            line=exc.lineno,
            column=exc.colno,
        )
        raise FilterError([issue], source=as_str(text)) from None
    except InexactNumber as exc:
        issue = Issue(path="", message=str(exc), suggestion=InexactNumber.hint)
        raise FilterError([issue], source=as_str(text)) from None
    except _NonFiniteNumber as exc:
        issue = Issue(
            path="", message=f"{exc} is not a JSON number", suggestion="use a finite number"
        )
        raise FilterError([issue], source=as_str(text)) from None
    except RecursionError:
        raise FilterError([Issue(path="", message="the JSON is nested too deeply")]) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise FilterError([Issue(path="", message=f"invalid JSON: {exc}")]) from None


# The start of a text-syntax filter: `(`, a field name in backquotes, `not`, a constant then a
# connective, or a name then a key (`.plan`) or an operator. No JSON document starts so.
_TEXT_SYNTAX = re.compile(
    r"\s*(?:\(|`|not\b|(?:true|false)\s+(?:and|or)\b|"
    r"[^\W\d]\w*\s*(?:\.|[<>=!]|(?:contains|starts|ends|in|not|is)\b))",
    re.IGNORECASE,
)


def _text_syntax_hint(text: str) -> str | None:
    """A pointer to `parse_text` when text that is not JSON reads like the text syntax; None
    otherwise (a broken JSON document gets no such advice)."""
    if _TEXT_SYNTAX.match(text) is None:
        return None
    return "this reads like the text syntax: read it with parse_text (JSON starts with {)"


def as_str(text: str | bytes) -> str | None:
    """The text of a JSON document, or None for bytes that are not UTF-8."""
    if isinstance(text, str):
        return text
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        return None
