"""`python -m audiencefilter.cli`: the same as the `audiencefilter` console script."""

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
