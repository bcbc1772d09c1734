"""``priorities``, ``penalty``, ``simulate``, ``sweep`` and ``baa.timeline`` against their
commands: the same JSON, table and report, to the byte; errors as ``InputError``."""

from __future__ import annotations

import subprocess

import pytest

import fairshare
from conftest import ROOT, cli, documented_columns

EXAMPLES = ROOT / "examples"
SHARES = EXAMPLES / "shares.toml"

pd = pytest.importorskip("pandas", reason="SKIPPED: the tables need pandas (pip install pandas)")


def command(tmp_path, args: list, report: bool = False) -> tuple[str, str, str]:
    """What ``fairshare ARGS --json F`` writes to F and prints, and its report (or "")."""
    out, page = tmp_path / "cli.json", tmp_path / "cli.html"
    extra = ["--report", page] if report else []
    printed = subprocess.run(
        [cli(), *args, "--json", out, *extra], check=True, capture_output=True, text=True
    ).stdout
    return out.read_text(), printed, page.read_text() if report else ""


def same(tmp_path, result: fairshare.Document, args: list, report: bool = False, table: bool = True):
    """Asserts that `result` is the command's JSON (and printed table, and report)."""
    text, printed, page = command(tmp_path, args, report)
    assert result.json() == text
    if table:
        assert result.table() == printed
    if report:
        result.to_html(tmp_path / "py.html")
        assert (tmp_path / "py.html").read_text() == page


def test_priorities_are_the_cli_s(tmp_path, small_log):
    result = fairshare.priorities(small_log, shares=SHARES, at="30m", decay="half-life:1h")
    args = ["priorities", small_log, "--shares", SHARES, "--at", "30m", "--decay", "half-life:1h"]
    same(tmp_path, result, args)
    rows = result.rows
    assert rows["name"].tolist()[0] == "root" and rows["rank"].dropna().min() == 1
    assert set(rows.columns) == set(documented_columns("Standings.rows"))
    for column, dtype in documented_columns("Standings.rows").items():
        assert str(rows[column].dtype) == dtype, column


def test_classic_priorities_with_pe_usage_are_the_cli_s(tmp_path, small_log):
    options = {"function": "slurm-classic", "usage": "dominant", "decay": "step:1h:0.5"}
    result = fairshare.priorities(small_log, **options)
    args = ["priorities", small_log, "--function=slurm-classic", "--usage=dominant", "--decay=step:1h:0.5"]
    same(tmp_path, result, args)


def test_penalty_is_the_cli_s(tmp_path):
    catalogue = EXAMPLES / "catalogue.toml"
    result = fairshare.penalty(catalogue, cpus=4, mem="16G", walltime="2h", properties=["x86_64"])
    args = ["penalty", "--machines", catalogue, "--cpus=4", "--mem=16G", "--walltime=2h"]
    same(tmp_path, result, [*args, "--properties=x86_64"])
    with pytest.raises(ValueError, match="no HTML report"):
        result.to_html(tmp_path / "nothing.html")


@pytest.mark.parametrize(
    "scenario", ["bottleneck/fig02-late-arrival.toml", "bottleneck/fig08c-green-double-randomised.toml", "runtime/e1.toml"]
)
def test_a_simulation_is_the_cli_s(tmp_path, scenario):
    path = EXAMPLES / scenario
    result = fairshare.simulate(path, progress=False)
    # The printed table holds the run's wall-clock time; the JSON and the report do not.
    same(tmp_path, result, ["simulate", path], report=True, table=False)


def test_a_simulation_s_overrides_are_the_cli_s(tmp_path):
    path = EXAMPLES / "bottleneck" / "fig08c-green-double-randomised.toml"
    told = []
    result = fairshare.simulate(path, runs=3, policy="fifo", progress=lambda d, t: told.append((d, t)))
    same(tmp_path, result, ["simulate", path, "--runs=3", "--policy=fifo"], table=False)
    assert sum(d for d, _ in told) == 3 and {t for _, t in told} == {3}


def test_a_sweep_is_the_cli_s(tmp_path, small_log):
    result = fairshare.sweep(small_log, fractions=[0.5, 1.0], nines=[2, 6], shard=(1, 2), progress=False)
    args = ["sweep", small_log, "--fractions=0.5,1.0", "--nines=2,6", "--shard=1/2"]
    same(tmp_path, result, args, report=True)
    cells = result.cells
    assert len(cells) == 3 and cells["epsilon"].isna().sum() == 1
    assert cells["mean_wait_s"].tolist() == [c["result"]["mean_wait_s"] for c in result.doc["cells"]]


def test_a_baa_timeline_is_the_cli_s(tmp_path):
    path = EXAMPLES / "baa" / "late-joiner.toml"
    result = fairshare.baa.timeline(path)
    same(tmp_path, result, ["baa", "timeline", path])
    held = result.allocations
    assert len(held) == len(result.doc["allocations"]) * len(result.doc["users"]) * len(result.doc["resources"])
    for column, dtype in documented_columns("BaaTimeline.allocations").items():
        assert str(held[column].dtype) == dtype, column


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda log: fairshare.priorities(log, function="nosuch"), 'function "nosuch": expected'),
        (lambda log: fairshare.priorities(log, at="yesterday"), "at: "),
        (lambda log: fairshare.priorities(log, decay="fast"), "decay: "),
        (lambda log: fairshare.priorities(log, usage="gold"), "usage: "),
        (lambda log: fairshare.penalty(log.parent / "none.toml"), "none.toml"),
        (lambda log: fairshare.penalty(EXAMPLES / "catalogue.toml", mem="lots"), "mem: "),
        (lambda log: fairshare.simulate(log, runs=3), "small.swf"),
        (lambda log: fairshare.simulate(EXAMPLES / "runtime" / "e1.toml", runs=3), "runs once"),
        (lambda log: fairshare.simulate(EXAMPLES / "bottleneck" / "fig02-late-arrival.toml", runs=0), "1 to 1000"),
        (lambda log: fairshare.sweep(log, fractions=[0.5, -1]), "every fraction must be positive"),
        (lambda log: fairshare.sweep(log, nines=[16]), "from 1 to 15"),
        (lambda log: fairshare.sweep(log, shard=(2, 2)), "shard=2/2"),
        (lambda log: fairshare.sweep(log, baseline="nosuch"), "baseline"),
        (lambda log: fairshare.baa.timeline(log), "small.swf"),
    ],
)
def test_bad_input_is_an_input_error_that_says_what(small_log, call, says):
    with pytest.raises(fairshare.InputError, match=says) as caught:
        call(small_log)
    assert "--" not in str(caught.value), "Python's errors name keyword arguments, not options"


def test_priorities_takes_the_old_policy_keyword_with_a_warning(tmp_path):
    log = tmp_path / "usage.swf"
    log.write_text("1 0 0 1000 1 -1 -1 1 1000 -1 1 1 1 1 1 1 -1 -1\n2 0 0 1000 4 -1 -1 4 1000 -1 1 2 1 1 1 1 -1 -1\n")
    with pytest.warns(DeprecationWarning, match="function="):
        old = fairshare.priorities(log, policy="pbs")
    assert old.rows.equals(fairshare.priorities(log, function="pbs").rows)
