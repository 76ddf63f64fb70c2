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
    large = (total_bytes or 0) > 8 << 20
    with _bar(stream, mode, large, "reading contacts", total_bytes, _BYTE_COLUMNS) as advance:
        yield advance


Step = Callable[[str], None]


@contextmanager
def step_progress(stream: IO[str], total_steps: int, mode: str) -> Iterator[Step]:
    """A callback called once per step done, with what comes next (`polars: F2`), drawing a bar
    of steps on a terminal (stderr). `mode` as for `progress`; `auto` draws on any terminal."""
    with _bar(stream, mode, True, "starting", total_steps, _STEP_COLUMNS) as advance:
        done = [0]

        def step(description: str) -> None:
            done[0] += 1
            advance(done[0], description)

        yield step


_BYTE_COLUMNS = ("BarColumn", "DownloadColumn", "TransferSpeedColumn", "TimeRemainingColumn")
_STEP_COLUMNS = ("BarColumn", "MofNCompleteColumn", "TimeElapsedColumn")


@contextmanager
def _bar(
    stream: IO[str], mode: str, large: bool, first: str, total: int | None, names: tuple[str, ...]
) -> Iterator[Callable[..., None]]:
    """`advance(done, description=None)`: a rich bar with the columns `names`, redrawn at most
    ten times a second, or a callback that does nothing when no bar is drawn."""
    bar = _rich_bar(stream, names, forced=mode == "always") if _shows(stream, mode, large) else None
    if bar is None:
        yield _ignore
        return
    with bar:
        task = bar.add_task(first, total=total)
        last = [0.0]

        def advance(done: int, description: str | None = None) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1 or (total is not None and done >= total):
                last[0] = now
                bar.update(task, completed=done, description=description or first)

        yield advance


def _shows(stream: IO[str], mode: str, large: bool) -> bool:
    return mode == "always" or (mode == "auto" and large and _isatty(stream))


def _rich_bar(stream: IO[str], names: tuple[str, ...], *, forced: bool) -> Any:
    """A transient rich `Progress` on `stream`, or None without rich. `forced` (`--progress
    always`) draws on a pipe too (a log, `tee`), where rich would otherwise draw nothing."""
    try:
        import rich.progress
        from rich.console import Console
    except ImportError:
        return None
    columns = [getattr(rich.progress, name)() for name in names]
    return rich.progress.Progress(
        "[progress.description]{task.description}",
        *columns,
        console=Console(file=stream, force_terminal=True if forced else None),
        transient=True,
    )


def _ignore(done: int, description: str | None = None) -> None:
    return None
