"""Field references: a field compared with another field of the same record
(`referrals > points`, JSON `{"referrals": {"gt": {"_ref": "points"}}}`).

The rule, in Python, for the evaluators that read records (the compiled predicate and
`explain`): a null on either side is UNKNOWN, as in SQL; values of the field's type compare as
literals do (`values.holds`): numbers exactly whatever mix of int, float and Decimal, strings
by code point, date-times as instants. A value of another type is an error naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .fields import FieldType
from .nodes import FieldComparison
from .python_values import is_plain
from .values import accepts, holds, record_value


def reference_truth(
    node: FieldComparison, kind: FieldType, record: Mapping[str, Any]
) -> bool | None:
    """True, False or None (UNKNOWN) for `node` on `record`, both fields of type `kind`.

    Raises:
        TypeError: a value is not of the fields' type (the callers name the field).
    """
    left, right = record.get(node.field), record.get(node.other)
    if left is None or right is None:
        return None
    for name, value in ((node.field, left), (node.other, right)):
        if not accepts(kind, value) or not is_plain(value):  # NumPy's, pandas': read again
            raise TypeError(f'field "{name}" holds {type(value).__name__} {value!r}')
    return holds(node.op, record_value(kind, left), record_value(kind, right))
