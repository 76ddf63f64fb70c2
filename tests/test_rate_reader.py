"""The rate benchmark's feed reader stops only at an empty page it asked for after the writers
finished: an empty page asked for earlier may predate the last writes' commits (the CI run
where one membership event of the last write was counted missing)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from benchmarks.rate_load import Reader


class _Answer:
    def __init__(self, events: list[dict[str, Any]], after: str, status: int) -> None:
        self.status_code = status
        self._data = {"events": events, "next": after}

    def json(self) -> dict[str, Any]:
        return {"data": self._data}


_EVENT = {"type": "audience.entered", "contactId": "c1", "audienceId": "a1"}


class _Feed:
    """Answers `pages` in order (then empty ones), each with its status (200 unless `statuses`
    says otherwise); the reader's `finish` is set during every request, as if the writers
    finished while the page was read."""

    def __init__(self, pages: list[list[dict[str, Any]]], statuses: tuple[int, ...] = ()) -> None:
        self.reader = Reader(self, "list1", "cursor0")  # type: ignore[arg-type]
        self.pages, self.statuses = pages, list(statuses)
        self.asked: list[str] = []

    @contextlib.contextmanager
    def api(self) -> Iterator[_Feed]:
        yield self

    def get(self, path: str) -> _Answer:
        self.asked.append(path)
        self.reader.finish.set()
        events = self.pages.pop(0) if self.pages else []
        status = self.statuses.pop(0) if self.statuses else 200
        return _Answer(events, f"cursor{len(self.asked)}", status)


def test_an_empty_page_asked_before_the_finish_does_not_end_the_reading() -> None:
    feed = _Feed([[], [{**_EVENT, "cause": "contact.updated"}], []])
    feed.reader.run()
    assert [(seen.type, seen.contact) for seen in feed.reader.seen] == [("audience.entered", "c1")]
    assert len(feed.asked) == 3  # the empty page, the event's page, the empty page after it
    assert feed.asked[1].endswith("after=cursor1")


def test_an_empty_page_asked_after_the_finish_ends_it() -> None:
    feed = _Feed([[]])
    feed.reader.finish.set()
    feed.reader.run()
    assert feed.reader.seen == [] and len(feed.asked) == 1


def test_a_page_not_answered_is_asked_again() -> None:
    feed = _Feed([[], []], statuses=(503,))
    feed.reader.finish.set()
    feed.reader.run()
    assert len(feed.asked) == 2
