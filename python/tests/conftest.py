"""What the tests share: where the repository is, the ``fairshare`` binary they compare with,
a small SWF log, and the columns docs/python.md documents."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli() -> pathlib.Path:
    """The ``fairshare`` binary the package is compared with (``FAIRSHARE_BIN``, else the
    workspace's debug build)."""
    path = pathlib.Path(os.environ.get("FAIRSHARE_BIN", ROOT / "target" / "debug" / "fairshare"))
    if not path.exists():
        pytest.skip(f"SKIPPED: no fairshare binary at {path} (cargo build -p fairshare, or set FAIRSHARE_BIN)")
    return path


def documented_columns(table: str) -> dict[str, str]:
    """The columns docs/python.md lists under ``table`` (e.g. ``Result.users``): name and dtype."""
    text = (ROOT / "docs" / "python.md").read_text()
    section = text.split(f"### `{table}`", 1)[1].split("###", 1)[0]
    return dict(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", section, re.MULTILINE))


@pytest.fixture
def small_log(tmp_path: pathlib.Path) -> pathlib.Path:
    """A 40-job SWF log on an 8-processor machine, five users (ids 1 to 5, as the example
    share file names them), jobs of 1 to 4 processors asking twice their runtime."""
    lines = ["; MaxProcs: 8"]
    for i in range(1, 41):
        run, procs = 100 + (i * 37) % 900, 1 + i % 4
        fields = [i, i * 60, -1, run, procs, -1, -1, procs, 2 * run, -1, 1, 1 + i % 5, 1, 1, 1, 1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path = tmp_path / "small.swf"
    path.write_text("\n".join(lines) + "\n")
    return path
