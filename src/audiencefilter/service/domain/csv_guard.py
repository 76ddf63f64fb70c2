"""The CSV-injection guard of a text cell, and its undoing: the export's one escape, read back.

A spreadsheet runs a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return as a
formula (`=HYPERLINK(...)`, OWASP's "CSV injection"), and public sign-ups write names, so the
export writes such text with an apostrophe in front (`'=x`), which a spreadsheet shows as the
text it is. So that the import reads the file back as it was, the escape must be undone, and
undone only where it was made: text that itself starts with an apostrophe followed by one of
those characters or by another apostrophe (`'=x`, `''`) gets one more in front too. The rule:

- `guarded`: text starting with one of `FORMULA_STARTS`, or with `'` followed by one of them or
  by `'`, is written with one `'` in front; any other text as it is;
- `unguarded`: a cell starting with `'` followed by one of them or by `'` loses that first `'`;
  any other cell is read as it is (`'Tis` stays `'Tis`).

So `unguarded(guarded(text)) == text` for every text, and no guarded cell starts like a
formula. Text cells only: numbers (`-5`), dates and JSON cells are written as they are.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
ESCAPED = frozenset(FORMULA_STARTS) | {"'"}
"""What may follow the apostrophe the guard writes: a formula's start, or another apostrophe."""


def guarded(text: str) -> str:
    """The cell of `text` in a CSV export: `=1+1` as `'=1+1`, `'=x` as `''=x`, `Ada` as is."""
    if text[:1] in FORMULA_STARTS or (text[:1] == "'" and text[1:2] in ESCAPED):
        return "'" + text
    return text


def unguarded(cell: str) -> str:
    """The text of a text cell the export guarded: `'=1+1` as `=1+1`, `''=x` as `'=x`."""
    if cell[:1] == "'" and cell[1:2] in ESCAPED:
        return cell[1:]
    return cell
