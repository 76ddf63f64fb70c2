"""`python -m audiencefilter.service ...` and the `audiencefilter-service` console script."""

from __future__ import annotations

import sys

from .commands.main import main

if __name__ == "__main__":
    sys.exit(main())
