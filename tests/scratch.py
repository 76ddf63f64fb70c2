"""Folders the suite makes outside pytest's `tmp_path` (at import, or once a process), removed
when the test session finishes.

An `atexit` handler alone left them in the temporary directory after whole runs, though not
after short ones: some worker's exit never reached its handlers (which exit was not found).
`pytest_sessionfinish` (tests/conftest.py) runs before any of that.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_FOLDERS: list[Path] = []


def folder(prefix: str) -> Path:
    """A new folder, removed when the session finishes (or the process exits, if sooner)."""
    made = Path(tempfile.mkdtemp(prefix=prefix))
    _FOLDERS.append(made)
    return made


@atexit.register
def remove_all() -> None:
    """Remove every folder made so far (a folder already removed is no error)."""
    while _FOLDERS:
        shutil.rmtree(_FOLDERS.pop(), ignore_errors=True)
