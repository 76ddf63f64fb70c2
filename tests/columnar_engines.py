"""The polars back-end as engines for the conformance and differential suites.

Each engine builds a DataFrame from the `given` records with the schema's column types
(`frame_for`) and selects ids with the filter's polars expression: eagerly through
`Filter.select_frame`, through a lazy frame on the streaming engine, which runs the same
expression batch by batch, and through `Filter.to_polars()`, built without the frame's types
(each column's type is then read as the expression runs). Without polars installed (it is an
optional extra) there are no columnar engines.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.engine_kinds import Engine, Records, built_once

try:
    import polars as pl

    from audiencefilter.backends.frames.polars import frame_for
except ImportError:  # pragma: no cover - the columnar extra is not installed
    COLUMNAR_ENGINES: list[Engine] = []
else:
    import audiencefilter as af

    def _ids(flt: af.Filter, records: Records) -> list[Any]:
        return [r.get("id") for r in records]

    def _frame(flt: af.Filter, records: Records) -> pl.DataFrame:
        """The records' frame, built once for the same records (a polars frame is immutable)."""

        def build() -> pl.DataFrame:
            frame = frame_for(list(records), flt.schema)
            return frame.with_columns(id=pl.Series(_ids(flt, records)))

        return built_once("polars", records, flt.schema, build)

    def _eager(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        frame = _frame(flt, records)
        return set(flt.select_frame(frame, now=now)["id"].to_list())

    def _streaming(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        frame = _frame(flt, records)
        chosen = flt.select_frame(frame.lazy(), now=now).collect(engine="streaming")
        return set(chosen["id"].to_list())

    def _untyped(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        frame = _frame(flt, records)
        return set(frame.filter(flt.to_polars(now=now))["id"].to_list())

    COLUMNAR_ENGINES = [
        Engine("polars", _eager),
        Engine("polars-streaming", _streaming),
        Engine("polars-untyped", _untyped),
    ]
