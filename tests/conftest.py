"""Suite-wide configuration: hypothesis profiles and the real database servers.

The `ci` profile keeps property tests bounded and derandomised (the same examples on every run,
no example database), so the whole suite stays fast and passes or fails the same way each time;
`thorough` is for deep runs (`HYPOTHESIS_PROFILE=thorough make test`). `search` leaves out
the `@example`s, so that a wide differential property shows what its generators find alone
(`HYPOTHESIS_PROFILE=search pytest --runxfail tests/test_differential_engines.py`).
"""

from __future__ import annotations

import gc
import os

from hypothesis import HealthCheck, Phase, settings

pytest_plugins = ["tests.servers", "tests.spark_session"]

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # Every run, and every fresh clone, tries the same examples: `make test` must pass or fail
    # the same way each time. `thorough` and `search` explore.
    derandomize=True,
    database=None,
)
settings.register_profile(
    "thorough",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "search",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.generate, Phase.target, Phase.shrink],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_unconfigure(config: object) -> None:
    """Take hypothesis's garbage-collection timer out of `gc.callbacks` when the run ends.

    Hypothesis adds a callback to `gc.callbacks` the first time a `@given` test runs and never
    removes it. At interpreter exit the module globals it reads are wiped before the last
    collections; the callback still runs in them, and objects still in the graph
    then, DuckDB's module-level type constants among them, are never freed: DuckDB's nanobind
    build reports them as ~60 lines of `nanobind: leaked ...` after the summary
    (tests/test_shutdown.py). The run is over here, so the timer has nothing left to measure.
    """
    gc.callbacks[:] = [
        callback
        for callback in gc.callbacks
        if not getattr(callback, "__module__", "").startswith("hypothesis.")
    ]
