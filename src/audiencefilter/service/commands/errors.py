"""The error a command stops with: printed on stderr, exit status 1, no traceback."""

from __future__ import annotations


class CommandError(Exception):
    """A failure to report on stderr with exit status 1, without a traceback."""
