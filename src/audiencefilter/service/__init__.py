"""The reference HTTP service for contacts, lists, actions and audiences (the `/v4` interface).

The service is an optional extra: nothing in the core library imports this package. Build an
application with `create_app(settings)`; run it with `python -m audiencefilter.service serve`.
The import of `create_app` is lazy so that the command line (key management, migrations) starts
without loading FastAPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .settings import Settings

__all__ = ["Settings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    if name == "Settings":
        from .settings import Settings

        return Settings
    raise AttributeError(name)
