"""The claims registry (`benchmarks.claims`) against the performance pages, and its machinery.

Every `<!-- claim: ID -->` marker of the pages (docs/performance*.md) has a registry entry and
every entry a marker, found exactly once, under the heading the entry names, whichever page
holds it; each entry's stated range is written in the text its marker stands before, with the
bounds the entry checks. docs/performance-now.md is what the registry writes. Each measure runs
at its `--quick` size and answers a number of the right kind (the library's here, the others in
tests/test_benchmarks_claims_services.py and tests/test_benchmarks_claims_spark.py). No timing
is asserted.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest

from benchmarks.claims import __main__ as cli
from benchmarks.claims import catalogue, markers, now
from benchmarks.claims.registry import Claim, at_most, between
from tests.claims_quick import answers_at_its_quick_size, quick

ROOT = Path(__file__).resolve().parent.parent
NOW = ROOT / "docs" / "performance-now.md"


def marked() -> dict[str, markers.Marked]:
    """Each marker's one place (the test below holds that there is one)."""
    return {claim_id: places[0] for claim_id, places in markers.marked().items()}


def test_every_marker_has_an_entry_and_every_entry_a_marker_found_once() -> None:
    ids = [claim.id for claim in catalogue.CLAIMS]
    assert len(ids) == len(set(ids))
    found = markers.marked()
    assert sorted(found) == sorted(ids)
    assert {i: len(places) for i, places in found.items() if len(places) != 1} == {}


def test_the_claims_are_on_the_method_and_history_pages() -> None:
    """The pages that hold the claims' words; none is left on the generated pages."""
    pages = {place.page for place in marked().values()}
    assert "performance-now.md" not in pages and "performance-results.md" not in pages
    assert pages <= {p.name for p in (ROOT / "docs").glob("performance*.md")}


@pytest.mark.parametrize("claim", catalogue.CLAIMS, ids=lambda c: c.id)
def test_the_stated_range_is_written_where_its_marker_stands(claim: Claim) -> None:
    place = marked()[claim.id]
    assert place.heading == claim.section
    assert claim.stated.text in " ".join(place.text.split())


def test_the_page_of_claims_now_is_what_the_registry_writes() -> None:
    """docs/performance-now.md cannot drift: it is the registry's page, nothing measured
    (`python -m benchmarks.claims --list --write-now docs/performance-now.md` writes it)."""
    expected = now.page(catalogue.CLAIMS, marked())
    assert NOW.read_text(encoding="utf-8") == expected, f"run {now.COMMAND}"


def test_the_command_writes_the_page_from_the_registry_without_measuring(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def never(quick: bool) -> list[float]:
        raise AssertionError("measured")

    claims = tuple(_replace(c, measure=never) for c in catalogue.CLAIMS)
    monkeypatch.setattr(catalogue, "CLAIMS", claims)
    written = tmp_path / "now.md"
    assert cli.main(["--list", "--write-now", str(written)]) == 0
    assert written.read_text(encoding="utf-8") == NOW.read_text(encoding="utf-8")


def test_a_measured_page_shows_the_figures_and_verdicts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    claims = tuple(_replace(c, measure=lambda q: [9.0]) for c in catalogue.CLAIMS[:2])
    monkeypatch.setattr(catalogue, "CLAIMS", claims)
    written = tmp_path / "now.md"
    assert cli.main(["--write-now", str(written)]) == 1
    text = written.read_text(encoding="utf-8")
    assert "| measured | verdict |" in text and "Measured: " in text
    assert f"| `{claims[0].id}` |" in text and "| 9.00x | does not hold (" in text


def _replace(claim: Claim, **changes: object) -> Claim:
    import dataclasses

    return dataclasses.replace(claim, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("claim", catalogue.CLAIMS, ids=lambda c: c.id)
def test_the_bounds_are_the_numbers_the_text_states(claim: Claim) -> None:
    stated = claim.stated
    for bound in (stated.low, stated.high):
        if bound is not None and stated.unit != "count":
            written = {f"{bound:g}", f"{bound:,.0f}", f"{bound:.1f}", f"{bound:.2f}"}
            assert any(number in stated.text for number in written), (bound, stated.text)


def test_a_range_holds_inside_and_fails_outside() -> None:
    ratio = between("0.8x to 1.2x", 0.8, 1.2)
    assert ratio.holds([0.8, 1.0, 1.2]) and not ratio.holds([1.0, 1.21])
    assert not ratio.holds([]) and not ratio.holds([math.nan])
    assert at_most("<= 4x", 4).holds([3.9]) and not at_most("<= 4x", 4).holds([4.1])
    assert ratio.show([0.91, 1.1]) == "0.91x to 1.10x"


def _fake(value: float) -> Claim:
    return Claim(
        "fake.one", "## Nowhere", "a figure", at_most("<= 2x", 2), "none", lambda q: [value]
    )


@pytest.mark.parametrize(("value", "status"), [(1.5, 0), (2.5, 1)])
def test_the_command_fails_when_a_claim_does_not_hold(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: float, status: int
) -> None:
    monkeypatch.setattr(catalogue, "CLAIMS", (_fake(value),))
    assert cli.main([]) == status
    word = "does not hold" if status else "holds"
    assert f"| fake.one | <= 2x | {value:.2f}x | {word} |" in capsys.readouterr().out


def test_long_claims_wait_to_be_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    long = Claim("fake.long", "## Nowhere", "a figure", at_most("<= 2x", 2), "none",
                 lambda q: [9.0], long=True)  # fmt: skip
    monkeypatch.setattr(catalogue, "CLAIMS", (long,))
    assert cli.main([]) == 0
    assert "not run (long" in capsys.readouterr().out
    assert cli.main(["--only", "fake.*"]) == 1


def _exits(quick: bool) -> list[float]:
    raise SystemExit("a benchmark gave up")


def test_a_measure_that_exits_is_an_error_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = Claim("fake.exits", "## Nowhere", "a figure", at_most("<= 2x", 2), "none", _exits)
    monkeypatch.setattr(catalogue, "CLAIMS", (broken, _fake(1.0)))
    assert cli.main([]) == 1
    out = capsys.readouterr().out
    assert "| fake.exits |" in out and "error (SystemExit: a benchmark gave up)" in out
    assert "| fake.one | <= 2x | 1.00x | holds |" in out


def test_bench_ends_with_the_claims() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbench:")[1].split("\n\n")[0].strip().splitlines()
    assert recipe[-1].strip() == "$(BIN)/python -m benchmarks.claims"


@pytest.mark.parametrize("claim", quick(library=True), ids=lambda c: c.id)
def test_each_measure_answers_at_its_quick_size(claim: Claim) -> None:
    """The library's measures here; the service's and the long ones in
    tests/test_benchmarks_claims_services.py, Spark's command in
    tests/test_benchmarks_claims_spark.py (each file a worker's share of the run)."""
    answers_at_its_quick_size(claim)


def _filterset_runs(monkeypatch: pytest.MonkeyPatch, medians: list[float]) -> list[int]:
    """The FilterSet's runs replaced by tiny ones whose changes cost `medians` ms each, in turn
    (every change of a run the same, so a run's p50 and p99 are its figure); answers the sizes
    each run was asked for."""
    from benchmarks import filterset_scale
    from benchmarks.claims import long

    asked: list[int] = []
    figures = iter(medians)

    def run(filters: int, changes: int) -> list[float]:
        asked.append(filters)
        return [next(figures)] * changes

    monkeypatch.setattr(filterset_scale, "update_cpu_ms", run)
    long._filterset.cache_clear()
    monkeypatch.setattr(long, "_filterset", functools.cache(long._filterset.__wrapped__))
    return asked


@pytest.mark.parametrize(
    ("medians", "status"),
    [([0.5, 2.0, 0.9], 0), ([2.0, 0.5, 1.5], 1), ([6.0, 0.4, 0.8], 0), ([1.2, 1.1, 0.3], 1)],
)
def test_the_filterset_claim_is_the_median_of_three_runs_and_fails_outside_its_range(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    medians: list[float],
    status: int,
) -> None:
    """Issue 52: `Tracked.update` at 100,000 filters, p50 <= 1 ms and p99 <= 5 ms, each the
    median of three runs; a measured figure outside the range makes the command fail."""
    asked = _filterset_runs(monkeypatch, medians)
    assert cli.main(["--only", "filterset.tracked-p50,filterset.tracked-p99"]) == status
    assert asked == [100_000] * 3
    median = sorted(medians)[1]
    out = capsys.readouterr().out
    word = "holds" if median <= 1 else "does not hold"
    assert f"| filterset.tracked-p50 | ≤ 1 ms p50 | {median:.2f} ms | {word} |" in out
    assert "| filterset.tracked-p99 | ≤ 5 ms p99 | " in out


def test_the_filterset_claims_state_the_target_at_100000_filters() -> None:
    claims = {c.id: c for c in catalogue.CLAIMS if c.id.startswith("filterset.")}
    assert sorted(claims) == ["filterset.tracked-p50", "filterset.tracked-p99"]
    p50, p99 = claims["filterset.tracked-p50"], claims["filterset.tracked-p99"]
    assert (p50.stated.high, p50.stated.unit) == (1, "ms")
    assert (p99.stated.high, p99.stated.unit) == (5, "ms")
    assert all("100,000 filters" in c.size and "median of 3 runs" in c.size for c in (p50, p99))
