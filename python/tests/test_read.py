"""``fairshare.read``: the trace readers on their own, streaming: the tasks a replay sees, in
typed DataFrames of bounded size; bad records as ``InputError`` or, lenient, counted."""

from __future__ import annotations

import pytest

import fairshare
from conftest import ROOT, documented_columns

SHARED = ROOT.parent / "shared" / "traces"
GOOGLE = SHARED / "google-2011" / "task_events" / "part-00000-of-00500.csv.gz"

pd = pytest.importorskip("pandas", reason="SKIPPED: the tables need pandas (pip install pandas)")


def test_chunks_are_bounded_and_together_the_whole_trace(small_log):
    chunks = list(fairshare.read(small_log, chunk=7))
    assert [len(c) for c in chunks] == [7, 7, 7, 7, 7, 5]
    whole = fairshare.read(small_log).frame()
    assert pd.concat(chunks, ignore_index=True).equals(whole)
    assert whole["id"].tolist() == list(range(1, 41))


def test_the_tasks_are_the_log_s(small_log):
    trace = fairshare.read(small_log)
    tasks = trace.frame()
    assert trace.resources == ["cpu"] and trace.units == ["processors"]
    first = tasks.iloc[0]
    assert (first["user"], first["submit_s"], first["runtime_s"], first["cpu"]) == ("2", 60.0, 137.0, 2.0)
    assert first["walltime_s"] == 274.0 and pd.isna(first["start_s"])  # SWF wait -1: unknown
    assert trace.stats["tasks_found"] == 40
    assert fairshare.replay(small_log, ["drf"], progress=False).doc["tasks_found"] == trace.stats["tasks_found"]


def test_the_columns_are_documented_and_typed(small_log):
    tasks = fairshare.read(small_log).frame()
    documented = documented_columns("Trace")
    for column in tasks.columns:
        name = "<resource>" if column == "cpu" else column
        assert documented.get(name) == str(tasks[column].dtype), column
    assert len(tasks.columns) == len(documented)


def test_frame_is_the_whole_trace_even_after_iterating(small_log):
    trace = fairshare.read(small_log, chunk=7)
    assert len(next(iter(trace))) == 7
    assert len(trace.frame()) == 40
    assert sum(len(chunk) for chunk in trace) == 33, "the iteration goes on where it stopped"
    shown = repr(trace)
    assert shown.startswith("<fairshare.Trace ") and "cpu (processors)" in shown, shown


def test_records_are_one_dict_per_task(small_log):
    records = list(fairshare.read(small_log, chunk=3).records())
    assert len(records) == 40 and records[-1]["id"] == 40 and records[-1]["user"] == "1"


def test_a_bad_record_stops_a_strict_read_and_is_counted_when_lenient(tmp_path, small_log):
    lines = small_log.read_text().splitlines()
    lines[3] = "3 120 -1 100 one -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1"
    bad = tmp_path / "bad.swf"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(fairshare.InputError, match=r"bad\.swf:4") as caught:
        fairshare.read(bad).frame()
    assert (caught.value.file, caught.value.line) == (str(bad), 4)
    assert "lenient=True skips such records" in str(caught.value)
    assert caught.value.field == "5 (allocated processors)"
    trace = fairshare.read(bad, lenient=True)
    assert len(trace.frame()) == 39 and sum(trace.stats["tasks_skipped"].values()) == 1


def test_bad_arguments_are_input_errors(tmp_path, small_log):
    with pytest.raises(fairshare.InputError, match="nothere"):
        fairshare.read(tmp_path / "nothere.swf")
    with pytest.raises(fairshare.InputError, match="chunk"):
        fairshare.read(small_log, chunk=0)
    with pytest.raises(fairshare.InputError, match='format "xls"'):
        fairshare.read(small_log, format="xls")


def test_a_shared_google_part_reads_as_the_replay_counts_it():
    if not GOOGLE.exists():
        pytest.skip(f"SKIPPED: {GOOGLE} is not there (the shared traces sit beside the repository)")
    trace = fairshare.read(GOOGLE, chunk=50_000)
    rows = sum(len(chunk) for chunk in trace)
    replayed = fairshare.replay(GOOGLE, ["drf"], gantt=False, progress=False).doc
    assert rows == replayed["tasks_found"] - sum(replayed["tasks_skipped"].values())
    assert trace.resources == ["cpu", "mem"]
