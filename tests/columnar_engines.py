"""The polars back-end as engines for the conformance and differential suites.

Each engine builds a DataFrame from the `given` records with the schema's column types
(`frame_for`) and selects ids with the filter's polars expression: eagerly, and through a lazy
frame on the streaming engine, which runs the same expression batch by batch. Without polars
installed (it is an optional extra) there are no columnar engines.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.engines import Engine, Records

try:
    import polars as pl

    from audiencefilter.backends.columnar import frame_for
except ImportError:  # pragma: no cover - the columnar extra is not installed
    COLUMNAR_ENGINES: list[Engine] = []
else:
    import audiencefilter as af

    def _ids(flt: af.Filter, records: Records) -> list[Any]:
        return [r.get("id") for r in records]

    def _eager(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        frame = frame_for(list(records), flt.schema).with_columns(id=pl.Series(_ids(flt, records)))
        return set(flt.select_rows(frame, now=now)["id"].to_list())

    def _streaming(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
        frame = frame_for(list(records), flt.schema).with_columns(id=pl.Series(_ids(flt, records)))
        chosen = flt.select_rows(frame.lazy(), now=now).collect(engine="streaming")
        return set(chosen["id"].to_list())

    COLUMNAR_ENGINES = [Engine("polars", _eager), Engine("polars-streaming", _streaming)]
