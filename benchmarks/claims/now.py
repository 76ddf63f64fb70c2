"""The page of the claims now (docs/performance-now.md), written from the registry.

`python -m benchmarks.claims --list --write-now docs/performance-now.md` writes it without
measuring anything: each claim, what it states, the range the pages give, the data, and the
section holding its words, grouped by page. After a measuring run (`--write-now` without
`--list`) the page gains what was measured and the verdict, with the machine and its load:
a page for a report, not for the repository, whose copy must equal the registry's
(`tests/test_benchmarks_claims.py`), so it cannot drift from the claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .markers import Marked, title
from .registry import Claim

COMMAND = "python -m benchmarks.claims --list --write-now docs/performance-now.md"


def page(
    claims: Sequence[Claim],
    places: Mapping[str, Marked],
    measured: Mapping[str, tuple[str, str]] | None = None,
    machine: str = "",
) -> str:
    """The page: `places` gives each claim's marker, `measured` its measured figure and verdict
    by id (none: the registry alone)."""
    lines = [
        "# The claims now",
        "",
        "> For contributors: measuring the claims needs the `bench` extra (in `dev`).",
        "",
        f"<!-- Written by `{COMMAND}`",
        "from the registry, benchmarks/claims/catalogue.py: change the registry or the pages that",
        "state the claims, then write this page again. -->",
        "",
        "Every figure the performance pages state by hand, with the range they give and the data",
        "it holds on. `python -m benchmarks.claims` measures each again through the benchmark that",
        "printed it and fails when one does not hold; long claims (hours) run only when named",
        "(`--only`) or with `--long`. How they are measured: [the method](performance.md).",
    ]
    if measured is not None:
        lines += ["", f"Measured: {machine}."]
    header = "| claim | statement | stated | data | section |"
    rule = "|---|---|---|---|---|"
    if measured is not None:
        header, rule = header + " measured | verdict |", rule + "---:|---|"
    for name in _pages(claims, places):
        lines += ["", f"## {title(name)}", "", f"On [{name}]({name}).", "", header, rule]
        for claim in claims:
            if places[claim.id].page == name:
                lines.append(_row(claim, places[claim.id], measured))
    return "\n".join(lines) + "\n"


def _pages(claims: Sequence[Claim], places: Mapping[str, Marked]) -> list[str]:
    """The pages holding claims, in the registry's order of their first claim."""
    return list(dict.fromkeys(places[claim.id].page for claim in claims))


def _row(claim: Claim, place: Marked, measured: Mapping[str, tuple[str, str]] | None) -> str:
    long = " (long)" if claim.long else ""
    cells = [
        f"`{claim.id}`{long}",
        claim.statement,
        claim.stated.text,
        claim.size,
        place.link,
    ]
    if measured is not None:
        cells += list(measured.get(claim.id, ("-", "not run")))
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
