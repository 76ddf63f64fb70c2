"""Every `$ audiencefilter ...` example in docs/cli.md prints what the page says it prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from audiencefilter.cli import main

CLI_DOC = Path(__file__).parent.parent / "docs" / "cli.md"
_EXAMPLE = re.compile(r"```\n\$ (audiencefilter .*?)\n(.*?)```\n", re.DOTALL)


_MEASURED = ((re.compile(r"\d+\.\d+"), "#"), (re.compile(r"\d+ CPUs"), "# CPUs"))
_SPACES = re.compile(r" +")


def _unmeasured(text: str) -> str:
    """`bench` output with its measured figures (every number with a decimal point, and the
    machine's CPUs) replaced and columns unaligned: what must not change between runs is left,
    the filters, the engines, the matches and the layout."""
    for pattern, replacement in _MEASURED:
        text = pattern.sub(replacement, text)
    return _SPACES.sub(" ", text)


def _examples() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _EXAMPLE.finditer(CLI_DOC.read_text("utf-8"))]


def test_the_page_has_examples() -> None:
    assert len(_examples()) >= 4


@pytest.mark.parametrize(("command", "output"), _examples(), ids=lambda v: v[:50])
def test_documented_command_prints_what_is_shown(
    command: str, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(shlex.split(command)[1:])
    captured = capsys.readouterr()
    if command.startswith("audiencefilter bench "):
        assert _unmeasured(captured.out + captured.err) == _unmeasured(output)
    else:
        assert captured.out + captured.err == output
