"""`python -m benchmarks.claims`: every claim of the performance pages measured again.

Each claim (`catalogue.CLAIMS`) names the section of a performance page (docs/performance*.md) it
is in, what it states, the range the page gives (a ratio, a bound in ms, "0 missing"), the data
it is measured on, and a measure that calls the benchmark module that printed the figure, at that
size. The pages mark each claim with `<!-- claim: ID -->` just before the text holding it;
docs/performance-now.md lists them all, written from the registry by `--write-now`.

    python -m benchmarks.claims                 # every claim but the long ones; exit 1 if one fails
    python -m benchmarks.claims --only gaps.sum,gates.parse   # these (long ones too)
    python -m benchmarks.claims --list          # the registry, nothing measured
    python -m benchmarks.claims --quick         # every measure at tiny sizes: the machinery only
    python -m benchmarks.claims --long          # the long ones too (hours)
    python -m benchmarks.claims --list --write-now docs/performance-now.md   # the page of claims

polars keeps its threads, as in `benchmarks.run`; `POLARS_MAX_THREADS=1` holds it to one, as
`benchmarks.gaps` does when run alone.
"""
