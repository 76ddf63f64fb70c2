"""The pandas back-end (`frames/narwhals.py`) as engines for the conformance and differential
suites: one pandas frame with pandas' default NumPy dtypes and one with pyarrow dtypes, each
built from the `given` records by `pandas_frame_for`, and a pyarrow Table, all selected by
`Filter.select_frame`. Without pandas and narwhals (the `pandas` extra) there are none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.engine_kinds import Engine, Records, built_once

try:
    import narwhals  # noqa: F401
    import pandas as pd

    from audiencefilter.backends.frames.narwhals import pandas_frame_for
except ImportError:  # pragma: no cover - the pandas extra is not installed
    PANDAS_ENGINES: list[Engine] = []
else:
    import audiencefilter as af

    def _frame(flt: af.Filter, records: Records, backend: Any) -> Any:
        """The records' frame: built once for the same records, each caller given a copy of
        its own (a pandas frame is mutable)."""

        def build() -> Any:
            frame = pandas_frame_for(list(records), flt.schema, dtype_backend=backend)
            ids = [r.get("id") for r in records]
            frame["id"] = pd.Series(ids, dtype=object if backend == "numpy" else "string[pyarrow]")
            return frame.set_axis([f"row{i}" for i in range(len(ids))])  # an index of its own

        return built_once(f"pandas-{backend}", records, flt.schema, build).copy()

    def _numpy(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        chosen = flt.select_frame(_frame(flt, records, "numpy"), now=now)
        return set(chosen["id"].to_list())

    def _pyarrow(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        chosen = flt.select_frame(_frame(flt, records, "pyarrow"), now=now)
        return set(chosen["id"].to_list())

    def _mask(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        frame = _frame(flt, records, "numpy")
        return set(frame[flt.frame_mask(frame, now=now)]["id"].to_list())

    def _arrow(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        import pyarrow as pa

        def build() -> Any:
            frame = _frame(flt, records, "pyarrow")
            return pa.Table.from_pandas(frame, preserve_index=False)

        # A pyarrow Table is immutable: one serves every filter of the same records.
        chosen = flt.select_frame(built_once("pyarrow", records, flt.schema, build), now=now)
        return {str(i) for i in chosen.column("id").to_pylist()}

    PANDAS_ENGINES = [
        Engine("pandas-numpy", _numpy),
        Engine("pandas-pyarrow", _pyarrow),
        Engine("pandas-mask", _mask),
        Engine("pyarrow-table", _arrow),
    ]
