"""The draw of an experiment's groups, as a pure function: shares, stability, the seed's key.

100,000 ids shaped like the service's (`con_` and 20 hex digits, from a seeded generator), so
the figures are the same on every run.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from audiencefilter.service.domain import experiments
from audiencefilter.service.domain.experiments import Experiment, Requested
from audiencefilter.service.ground.errors import Conflict, Invalid

MEMBERS = 100_000
SPLITS = [
    (10, (("A", 45), ("B", 45))),
    (0, (("control", 50), ("treatment", 50))),
    (5, (("A", 19), ("B", 19), ("C", 19), ("D", 19), ("E", 19))),
    (1, (("big", 98), ("tiny", 1))),
]


def _ids(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"con_{rng.getrandbits(80):020x}" for _ in range(count)]


@pytest.mark.parametrize(("holdout", "groups"), SPLITS)
def test_shares_are_within_one_point_at_100000_members(
    holdout: int, groups: tuple[tuple[str, int], ...]
) -> None:
    experiment = experiments.read(Requested("spring-launch", holdout, groups))
    drawn = Counter(experiment.draw(contact_id) for contact_id in _ids(MEMBERS))
    shares = {
        draw.group if not draw.holdout else None: n * 100 / MEMBERS for draw, n in drawn.items()
    }
    expected = {None: holdout, **dict(groups)} if holdout else dict(groups)
    assert set(shares) == set(expected)
    deviation = max(abs(shares[name] - percent) for name, percent in expected.items())
    print(f"{expected}: largest deviation {deviation:.3f} points over {MEMBERS} members")
    assert deviation <= 1.0


def test_a_draw_depends_on_the_seed_and_the_id_alone() -> None:
    split = (("A", 50), ("B", 50))
    one = Experiment("seed-1", 0, split)
    again = experiments.stored(one.to_json())
    other = Experiment("seed-2", 0, split)
    ids = _ids(2000, seed=11)
    assert again is not None
    assert [one.draw(i) for i in ids] == [again.draw(i) for i in ids]
    same = sum(one.draw(i) == other.draw(i) for i in ids)
    # Another seed is another draw: about half agree by chance, far from all or none.
    assert 800 < same < 1200


def test_the_holdout_takes_the_first_slots_and_groups_follow_in_order() -> None:
    everyone_held = Experiment("s", 99, (("A", 1),))
    ids = _ids(3000, seed=3)
    held = sum(everyone_held.draw(i).holdout for i in ids)
    assert 2900 < held < 3000
    assert all(d.group in (None, "A") for d in map(everyone_held.draw, ids))


def test_percents_must_sum_to_100_and_names_be_unique() -> None:
    with pytest.raises(Invalid) as caught:
        experiments.read(Requested(None, 10, (("A", 45), ("a", 40))))
    places = {issue.at: issue for issue in caught.value.errors}
    assert set(places) == {("experiment",), ("experiment", "groups", 1, "name")}
    assert places[("experiment",)].found == "10 + 85 = 95"
    assert places[("experiment",)].suggestion
    assert "as group 0" in (places[("experiment", "groups", 1, "name")].found or "")


def test_a_seed_is_drawn_when_none_is_given() -> None:
    first = experiments.read(Requested(None, 0, (("A", 100),)))
    second = experiments.read(Requested(None, 0, (("A", 100),)))
    assert first.seed and second.seed and first.seed != second.seed
    assert Requested(None, 0, (("A", 100),)).same_as(first)
    assert not Requested("other", 0, (("A", 100),)).same_as(first)
    assert isinstance(experiments.fixed(first.to_json()), Conflict)
