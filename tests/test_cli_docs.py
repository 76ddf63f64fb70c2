"""Every `$ audiencefilter ...` example in docs/cli.md prints what the page says it prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from audiencefilter.cli import main

CLI_DOC = Path(__file__).parent.parent / "docs" / "cli.md"
_EXAMPLE = re.compile(r"```\n\$ (audiencefilter .*?)\n(.*?)```\n", re.DOTALL)


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
    assert captured.out + captured.err == output
