"""Sizes of the default run (the `ci` hypothesis profile) beside the deeper profiles' own.

`make test` must stay short on two cores, so a costly property may draw fewer examples there;
`thorough`, `search` and `deep` keep their number (the profile's, tests/conftest.py, or the
test's own), so the deep runs are as wide as before. Examples named with `@example` run in
every profile.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import settings

DEFAULT_RUN = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
"""Whether this is the default run (`make test`), not a deep one."""


def default_run_examples(examples: int, *, full: int | None = None, **other: Any) -> settings:
    """At most `examples` drawn in the default run (fewer if its profile says fewer); `full`
    (or the loaded profile's number) in any other; `other` settings alike in every run."""
    if DEFAULT_RUN:
        return settings(max_examples=min(examples, settings.default.max_examples), **other)
    return settings(**other) if full is None else settings(max_examples=full, **other)
