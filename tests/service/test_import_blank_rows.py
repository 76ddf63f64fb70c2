"""`contact_import._BlankRows` makes the rows `RowMaker.row` makes.

The same keys in the same order and the same values; the columns whose defaults are functions
(a random id, a referral code) compared by their shape, since each call draws anew.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from audiencefilter.service.domain import contact_import

ATTRIBUTES = sorted(contact_import.CONTACT_ROWS.names)
values = st.dictionaries(
    st.sampled_from(ATTRIBUTES),
    st.one_of(st.none(), st.integers(), st.text(max_size=5), st.dictionaries(st.text(), st.none())),
)


def _drawn(row: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The row with each column drawn by a default function replaced by its value's type."""
    names = contact_import.CONTACT_ROWS.names
    sent = {names[key] for key in given}
    drawn = {name for name, _, _ in contact_import._CONTACT_ROWS.made if name not in sent}
    return {name: type(value) if name in drawn else value for name, value in row.items()}


@given(given=values)
def test_blank_rows_are_the_makers_rows(given: dict[str, Any]) -> None:
    fast = contact_import._CONTACT_ROWS.row(given)
    plain = contact_import.CONTACT_ROWS.row(given)
    assert list(fast) == list(plain)
    assert _drawn(fast, given) == _drawn(plain, given)


def test_every_row_draws_its_own_values() -> None:
    first, second = (contact_import._CONTACT_ROWS.row({"email": "a@b.c"}) for _ in range(2))
    assert first["id"] != second["id"]
    assert first["data"] is not second["data"]
