"""Writing for people: colour and a progress bar on a terminal, plain text everywhere else.

`rich` (the `cli` extra) is used only when it is installed, the stream is a terminal and
`NO_COLOR` is unset; piped output is always plain, so scripts and tests see stable text.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

_MARKS = (("✓ ", "green"), ("✗ ", "red"), ("? ", "yellow"))


def wants_color(stream: IO[str]) -> bool:
    """Colour only for a terminal, with rich installed, unless NO_COLOR is set."""
    if os.environ.get("NO_COLOR") or not _isatty(stream):
        return False
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def write(stream: IO[str], text: str) -> None:
    """`text` and a newline; on a colour terminal, lines styled by how they start."""
    if not wants_color(stream):
        stream.write(text + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False, soft_wrap=True)
    for line in text.split("\n"):
        console.print(Text(line, style=_style(line)))


def _style(line: str) -> str:
    """Error heads and carets red, hints cyan, explanation lines by outcome."""
    stripped = line.lstrip()
    if line.startswith("error") or (stripped and set(stripped) == {"^"}):
        return "bold red"
    if line.startswith("  hint:"):
        return "cyan"
    return next((style for mark, style in _MARKS if stripped.startswith(mark)), "")


Tick = Callable[[int], None]


@contextmanager
def progress(stream: IO[str], total_bytes: int | None, mode: str) -> Iterator[Tick]:
    """A callback taking the bytes read so far, drawing a bar on a terminal (stderr).

    `mode` is `auto` (a bar for files over 8 MiB when `stream` is a terminal), `always` or
    `never`. Without rich, or when not drawing, the callback does nothing.
    """
    show = mode == "always" or (mode == "auto" and _isatty(stream) and (total_bytes or 0) > 8 << 20)
    bar: Any = None
    if show:
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )
        except ImportError:
            show = False
        else:
            bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(file=stream),
                transient=True,
            )
    if not show or bar is None:
        yield _ignore
        return
    with bar:
        task = bar.add_task("reading contacts", total=total_bytes)
        last = [0.0]

        def tick(done: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1:
                last[0] = now
                bar.update(task, completed=done)

        yield tick


def _ignore(done: int) -> None:
    return None
