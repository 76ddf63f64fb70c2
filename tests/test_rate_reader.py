"""The rate benchmark's feed reader stops only at an empty page it asked for after the writers
finished: an empty page asked for earlier may predate the last writes' commits (the CI run
where one membership event of the last write was counted missing)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from benchmarks.rate_load import Reader


class _Answer:
    status_code = 200

    def __init__(self, events: list[dict[str, Any]], after: str) -> None:
        self._data = {"events": events, "next": after}

    def json(self) -> dict[str, Any]:
        return {"data": self._data}


class _Feed:
    """Answers pages in order; the first is read while the writers finish (`finish` is set
    during the request) and is empty, the last write's event committing just after it."""

    def __init__(self) -> None:
        self.reader: Reader | None = None
        self.asked: list[str] = []
        event = {"type": "audience.entered", "contactId": "c1", "audienceId": "a1"}
        self.pages = [[], [{**event, "cause": "contact.updated"}], []]

    def get(self, path: str) -> _Answer:
        self.asked.append(path)
        assert self.reader is not None
        self.reader.finish.set()
        events = self.pages.pop(0) if self.pages else []
        return _Answer(events, f"cursor{len(self.asked)}")


class _Stack:
    def __init__(self, feed: _Feed) -> None:
        self.feed = feed

    @contextlib.contextmanager
    def api(self) -> Iterator[_Feed]:
        yield self.feed


def test_an_empty_page_asked_before_the_finish_does_not_end_the_reading() -> None:
    feed = _Feed()
    reader = Reader(_Stack(feed), "list1", "cursor0")  # type: ignore[arg-type]
    feed.reader = reader
    reader.run()
    assert [(seen.type, seen.contact) for seen in reader.seen] == [("audience.entered", "c1")]
    assert len(feed.asked) == 3  # the empty page, the event's page, the empty page after it
    assert feed.asked[1].endswith("after=cursor1")


def test_an_empty_page_asked_after_the_finish_ends_it() -> None:
    feed = _Feed()
    feed.pages = [[]]
    reader = Reader(_Stack(feed), "list1", "cursor0")  # type: ignore[arg-type]
    feed.reader = reader
    reader.finish.set()
    reader.run()
    assert reader.seen == [] and len(feed.asked) == 1


def test_a_page_not_answered_is_asked_again() -> None:
    feed = _Feed()
    feed.pages = [[], []]
    reader = Reader(_Stack(feed), "list1", "cursor0")  # type: ignore[arg-type]
    feed.reader = reader
    reader.finish.set()
    failing = feed.get

    def first_fails(path: str) -> _Answer:
        answer = failing(path)
        if len(feed.asked) == 1:
            answer.status_code = 503
        return answer

    feed.get = first_fails  # type: ignore[method-assign]
    reader.run()
    assert len(feed.asked) == 2
