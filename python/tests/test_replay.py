"""``fairshare.replay`` against ``fairshare replay``: the same trace and options give the same
JSON and the same HTML report, to the byte; the tables are typed DataFrames holding the JSON's
numbers; bad input raises ``fairshare.InputError`` saying where and what."""

from __future__ import annotations

import gzip
import json
import math
import pathlib
import re
import subprocess
import sys
import threading

import pytest

import fairshare
from conftest import ROOT, cli, documented_columns

SHARED = ROOT.parent / "shared" / "traces"
WAGAP = SHARED / "swf" / "wagap-2013.swf"
SHARES = ROOT / "examples" / "shares.toml"
POLICIES = ["drf", "sdrf:delta=0.999999", "fairshare"]

pd = pytest.importorskip("pandas", reason="SKIPPED: the tables need pandas (pip install pandas)")


def cli_replay(tmp_path: pathlib.Path, args: list) -> tuple[str, str]:
    """The JSON and the HTML report ``fairshare replay ARGS`` writes."""
    out, page = tmp_path / "cli.json", tmp_path / "cli.html"
    subprocess.run(
        [cli(), "replay", *args, "--json", out, "--report", page], check=True, capture_output=True
    )
    return out.read_text(), page.read_text()


def same_as_cli(tmp_path, result: fairshare.Result, args: list) -> None:
    """Asserts that `result` is what the command writes for `args`, JSON and report."""
    text, page = cli_replay(tmp_path, args)
    assert result.json() == text
    result.to_html(tmp_path / "py.html")
    assert (tmp_path / "py.html").read_text() == page


def test_a_replay_is_the_cli_s_to_the_byte(tmp_path, small_log):
    result = fairshare.replay(small_log, POLICIES, shares=SHARES, progress=False)
    args = [small_log, *[f"--policy={p}" for p in POLICIES], "--shares", SHARES]
    same_as_cli(tmp_path, result, args)


def test_the_defaults_are_the_cli_s(tmp_path, small_log):
    same_as_cli(tmp_path, fairshare.replay(str(small_log), progress=False), [small_log])


def test_cluster_options_are_the_cli_s(tmp_path, small_log):
    result = fairshare.replay(
        [small_log],
        ["fifo", "drf"],
        capacity={"cpu": 6},
        scheduler="easy",
        overrun="extend",
        horizon="40m",
        gantt="0+1h",
        progress=False,
    )
    args = [small_log, "--policy=fifo", "--policy=drf", "--capacity=cpu=6", "--scheduler=easy"]
    same_as_cli(tmp_path, result, [*args, "--overrun=extend", "--horizon=40m", "--gantt=0+1h"])


def test_a_slurm_conf_is_the_cli_s_and_what_it_leaves_out_is_noted(tmp_path, small_log):
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "SchedulerParameters=bf_interval=10\nPriorityWeightAge=1000\nPriorityMaxAge=00:10:00\n"
        "PriorityWeightQOS=5\nPriorityWeightAssoc=5\nNodeName=n[1-4] CPUs=4\n"
    )
    result = fairshare.replay(small_log, ["drf"], scheduler="slurm", slurm_conf=conf, progress=False)
    assert any(n.startswith("PriorityWeightAssoc is set but the shares give no association a priority") for n in result.notes)
    assert any(n.startswith("slurm_conf: PriorityWeightQOS is set but no QOS has a priority above 0") for n in result.notes)
    args = [small_log, "--policy=drf", "--scheduler=slurm", "--slurm-conf", conf]
    same_as_cli(tmp_path, result, args)
    plain = fairshare.replay(small_log, ["drf"], scheduler="slurm", progress=False)
    assert plain.json() != result.json(), "the configuration changes the schedule"
    with pytest.raises(fairshare.InputError, match="slurm_conf sets scheduler=\"slurm\"'s parameters"):
        fairshare.replay(small_log, ["drf"], scheduler="easy", slurm_conf=conf, progress=False)
    conf.write_text("PriorityMaxAge=a week\n")
    with pytest.raises(fairshare.InputError, match="PriorityMaxAge takes a Slurm duration"):
        fairshare.replay(small_log, ["drf"], scheduler="slurm", slurm_conf=conf, progress=False)


def test_a_slurm_dump_takes_its_defaults_from_the_sites_configuration_as_the_cli_does(tmp_path):
    day = "2026-01-01T00:"
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n"
        f"1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED\n"
        f"2|bob|a|{day}00:01|{day}01:40|{day}01:50|00:00:10|00:00:10|cpu=3,node=1|cpu|COMPLETED\n"
    )
    conf = tmp_path / "config.txt"
    conf.write_text(
        "ClusterName=emu\nPriorityWeightFairshare=1000\nPriorityDecayHalfLife=00:10:00\n"
        "PriorityCalcPeriod=00:00:30\nNodeName=n1 CPUs=4\n"
        "PartitionName=cpu Nodes=n1 Default=YES TRESBillingWeights=CPU=2.0\n"
    )
    assoc = tmp_path / "assoc.txt"
    assoc.write_text("".join(
        f"{c}|root|||1||\n{c}|a|||1|root|\n{c}|a|alice||1|a|\n{c}|a|bob||{s}|a|\n"
        for c, s in [("peer", 1), ("emu", 9)]
    ))
    policy = "fairshare:function=fair-tree"
    result = fairshare.replay(
        dump, [policy], scheduler="slurm", slurm_conf=conf, shares=assoc, drain=True, progress=False
    )
    assert (
        "slurm_conf: fairshare:function=fair-tree: run as fairshare:function=fair-tree,"
        "decay=half-life:600,refresh=60,usage=billing, from the Slurm configuration" in " ".join(result.notes)
    ), result.notes
    assert any(n.startswith("machines: the nodes and partitions of slurm_conf") for n in result.notes)
    assert any(n.startswith("billing: the partitions' TRESBillingWeights of slurm_conf") for n in result.notes)
    args = [dump, f"--policy={policy}", "--scheduler=slurm", "--slurm-conf", conf, "--shares", assoc, "--drain"]
    same_as_cli(tmp_path, result, args)


def test_a_fair_tree_policy_is_in_phase_with_the_priority_plugins_start_as_the_cli_s(tmp_path):
    """The controller started at 00:00:00.200, its priority plugin at 00:00:07.450: Slurm
    recomputes every PriorityCalcPeriod (30 s) from the plugin's start, 7.45 s past each
    multiple, and the replay's notes and results say so as the command's do."""
    day = "2026-01-01T00:"
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n"
        f"1|alice|a|{day}00:10|{day}00:10|{day}01:50|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED\n"
        f"2|bob|a|{day}00:11|{day}01:50|{day}02:00|00:00:10|00:00:10|cpu=3,node=1|cpu|COMPLETED\n"
    )
    conf = tmp_path / "config.txt"
    conf.write_text(
        "ClusterName=emu\nPriorityWeightFairshare=1000\nPriorityDecayHalfLife=00:10:00\n"
        "PriorityCalcPeriod=00:00:30\nNodeName=n1 CPUs=4\nPartitionName=cpu Nodes=n1 Default=YES\n"
    )
    log = tmp_path / "slurmctld.log"
    log.write_text(
        "[2026-01-01T00:00:00.200] Running as primary controller\n"
        "[2026-01-01T00:00:07.450] _read_last_decay_ran: No last decay (/var/spool/slurm/priority_last_decay_ran) to recover\n"
    )
    policy = "fairshare:function=fair-tree"
    common = dict(scheduler="slurm", slurm_conf=conf, slurmctld_log=log, drain=True, progress=False)
    result = fairshare.replay(dump, [policy], **common)
    notes = " ".join(result.notes)
    assert "refresh-offset=7.45" in notes and "the priority plugin's start in its log" in notes, notes
    args = [dump, f"--policy={policy}", "--scheduler=slurm", "--slurm-conf", conf, "--drain"]
    same_as_cli(tmp_path, result, [*args, "--slurmctld-log", log])


def test_a_slurm_dumps_jobs_join_back_to_the_dump_by_their_job_ids(tmp_path):
    day = "2026-01-01T00:"
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n"
        f"4711|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu|COMPLETED\n"
        f"10_1|bob|a|{day}00:01|{day}00:01|{day}00:50|00:00:49|00:00:50|cpu=1,node=1|cpu|COMPLETED\n"
        f"10_2|bob|a|{day}00:01|{day}00:02|{day}00:50|00:00:48|00:00:50|cpu=1,node=1|cpu|COMPLETED\n"
    )
    result = fairshare.replay(
        dump, ["fifo", "drf"], capacity={"cpu": 4}, scheduler="slurm", drain=True, jobs=True, progress=False
    )
    jobs = result.jobs
    assert jobs["job_id"].dtype == "string"
    sacct = pd.read_csv(dump, sep="|", dtype={"JobID": "string"})
    joined = jobs.merge(sacct, left_on="job_id", right_on="JobID")
    assert len(joined) == len(jobs) == 6, "every row of both policies, by Slurm's JobID"
    assert (joined["user"] == joined["User"]).all()
    plain = result.jobs[result.jobs["job_id"] == "4711"]
    assert plain["user"].tolist() == ["alice", "alice"]


def test_qos_priorities_order_a_slurm_dumps_jobs_and_bill_them_as_the_cli_does(tmp_path):
    day = "2026-01-01T00:"
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State|QOS\n"
        f"1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED|normal\n"
        f"2|bob|a|{day}00:01|{day}01:40|{day}01:50|00:00:10|00:00:10|cpu=3,node=1|cpu|COMPLETED|normal\n"
        f"3|carol|a|{day}00:02|{day}01:50|{day}02:00|00:00:10|00:00:10|cpu=3,node=1|cpu|COMPLETED|high\n"
    )
    conf = tmp_path / "config.txt"
    conf.write_text("PriorityWeightQOS=1000000\nNodeName=n1 CPUs=4\nPartitionName=cpu Nodes=n1 Default=YES\n")
    qos = tmp_path / "qos.txt"
    qos.write_text("normal|1.000000|0\nhigh|2.000000|100\n")
    common = dict(machines=conf, scheduler="slurm", slurm_conf=conf, drain=True, progress=False)
    with_qos = fairshare.replay(dump, ["fifo"], qos=qos, **common)
    starts = with_qos.jobs.set_index("user")["starting_time"]
    # 1,000,000 points of QOS outrank the site factors FIFO gives bob (100,000) and carol
    # (50,000) from the adapter's pass at 60 s.
    assert starts["carol"] < starts["bob"], "carol's QOS outranks bob's earlier submission"
    args = [dump, "--policy=fifo", "--machines", conf, "--scheduler=slurm", "--slurm-conf", conf, "--drain"]
    same_as_cli(tmp_path, with_qos, [*args, "--qos", qos])
    weighed = fairshare.replay(dump, ["fifo"], qos=qos, site_weight=1, **common)
    same_as_cli(tmp_path, weighed, [*args, "--qos", qos, "--site-weight", "1"])
    with pytest.raises(fairshare.InputError, match="site_weight 0"):
        fairshare.replay(dump, ["fifo"], qos=qos, site_weight=0, **common)
    every_5_s = fairshare.replay(dump, ["fifo"], qos=qos, site_interval="5s", **common)
    same_as_cli(tmp_path, every_5_s, [*args, "--qos", qos, "--site-interval", "5s"])
    with pytest.raises(fairshare.InputError, match="site_interval 0.5: how often the Slurm adapter"):
        fairshare.replay(dump, ["fifo"], qos=qos, site_interval=0.5, **common)
    without = fairshare.replay(dump, ["fifo"], **common)
    starts = without.jobs.set_index("user")["starting_time"]
    assert starts["bob"] < starts["carol"], "without the QOS priorities, the earlier submission"
    assert any(n.startswith("slurm_conf: PriorityWeightQOS is set but no QOS") for n in without.notes)
    qos.write_text("normal|1.000000|0\nhigh|2.000000|top\n")
    with pytest.raises(fairshare.InputError, match="qos .*qos.txt: line 2"):
        fairshare.replay(dump, ["fifo"], qos=qos, **common)


def test_a_job_cancelled_while_it_waited_is_read_replayed_and_counted_as_the_cli_does(tmp_path):
    day = "2026-01-01T00:"
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES|ReqTRES|State\n"
        f"1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|cpu=3,node=1|cpu=3,node=1|COMPLETED\n"
        f"2|bob|a|{day}00:01|{day}00:40|{day}00:40|00:10:00||cpu=4,node=1|CANCELLED by 1001\n"
        f"3|carol|a|{day}00:02|{day}01:00|{day}02:30|00:02:00|cpu=1,node=1|cpu=1,node=1|COMPLETED\n"
    )
    trace = fairshare.read(dump).frame().set_index("user")
    assert trace.loc["bob", "cancelled_s"] == 1_767_225_640 and trace.loc["bob", "runtime_s"] == 0
    assert trace["start_s"].isna().tolist() == [False, True, False]
    assert trace["cancelled_s"].isna().tolist() == [True, False, True]
    common = dict(capacity="cpu=4,mem=0,gpu=0", scheduler="slurm", drain=True, progress=False)
    result = fairshare.replay(dump, ["fifo"], **common)
    args = [dump, "--policy=fifo", "--capacity", "cpu=4,mem=0,gpu=0", "--scheduler=slurm", "--drain"]
    same_as_cli(tmp_path, result, args)
    fifo = result.summary.set_index("policy").loc["fifo"]
    assert (fifo.tasks_submitted, fifo.tasks_completed, fifo.tasks_cancelled) == (3, 2, 1)
    jobs = result.jobs.set_index("user")
    assert jobs.loc["bob", "final_state"] == "cancelled" and jobs.loc["bob", "waiting_time"] == 39
    # carol waits behind bob's job until the backfill cycle after his cancellation.
    assert jobs.loc["carol", "starting_time"] == 1_767_225_660
    assert any("cancelled by their owners while they waited" in w for w in result.warnings)


def test_a_slurm_sites_nodes_and_partitions_are_the_cli_s(tmp_path):
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n"
        "1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED\n"
        "2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:40|2026-01-01T00:01:50|00:00:10|00:00:10|cpu=2,node=1|cpu|COMPLETED\n"
        "3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:04|2026-01-01T00:00:14|00:00:10|00:00:10|cpu=1,node=1|gpu|COMPLETED\n"
    )
    conf = tmp_path / "config.txt"
    conf.write_text(
        "PriorityWeightPartition=1000\nNodeName=n1 CPUs=4 RealMemory=16000\nNodeName=g1 CPUs=4 Gres=gpu:4\n"
        "PartitionName=cpu Nodes=n1 Default=YES\nPartitionName=gpu Nodes=g1 PriorityTier=2\n"
    )
    result = fairshare.replay(dump, ["fifo"], machines=conf, scheduler="slurm", slurm_conf=conf, progress=False)
    args = [dump, "--policy=fifo", "--machines", conf, "--scheduler=slurm", "--slurm-conf", conf]
    same_as_cli(tmp_path, result, args)
    recorded = result.shares[result.shares["policy"] == "as recorded"]
    held = recorded.groupby("user")["dominant_share"].max()
    assert held["alice"] == 0.375 and held["carol"] == 0.125, "3 and 1 of the 8 CPUs, as the dump records"
    jobs = result.jobs.set_index("user")
    assert jobs.loc["carol", "partition"] == "gpu" and jobs.loc["carol", "allocated_resources"] == "g1"
    # At the main scheduler's next pass (4 s: batch_sched_delay, 3 s after the one at 1 s).
    assert jobs.loc["carol", "starting_time_error"] == 0, "started on its partition's node as recorded"
    conf.write_text("NodeName=n[1-4 CPUs=4\n")
    with pytest.raises(fairshare.InputError, match="line 1: NodeName="):
        fairshare.replay(dump, ["fifo"], machines=conf, progress=False)


def test_the_shared_wagap_log_is_the_cli_s(tmp_path):
    if not WAGAP.exists():
        pytest.skip(f"SKIPPED: {WAGAP} is not there (the shared traces sit beside the repository)")
    queues = ROOT / "examples" / "wagap-2013.queues"
    result = fairshare.replay(WAGAP, ["fifo", "fairshare"], scheduler="easy", queues=queues, progress=False)
    args = [WAGAP, "--policy=fifo", "--policy=fairshare", "--scheduler=easy", "--queues", queues]
    same_as_cli(tmp_path, result, args)
    summary = result.summary
    assert summary["policy"].tolist() == ["fifo", "fairshare", "as recorded"]
    assert summary["tasks_submitted"].tolist() == [17898, 17898, 17898]


def test_the_tables_hold_the_json_s_numbers(small_log):
    result = fairshare.replay(small_log, POLICIES, shares=SHARES, progress=False)
    doc = result.doc
    summary = result.summary
    assert summary["policy"].tolist() == POLICIES
    for row, run in zip(summary.itertuples(), doc["policies"]):
        assert row.mean_wait_s == run["mean_wait_s"] and row.jain_slowdown == run["jain_slowdown"]
        assert row.jain_dominant_share == run["jain_dominant_share"]
        assert row.util_cpu == run["utilization"]["cpu"]
    users = result.users
    assert len(users) == sum(len(run["users"]) for run in doc["policies"])
    first = doc["policies"][0]["users"][0]
    assert users.iloc[0]["user"] == first["id"] and users.iloc[0]["mean_wait_s"] == first["mean_wait_s"]
    charged = users.set_index(["policy", "user"])["charged"]
    assert math.isnan(charged["drf", "1"]) and charged["fairshare", "1"] > 0
    accounts = result.accounts
    assert accounts[accounts["policy"] == "drf"]["account"].tolist()[0] == "root"
    assert pd.isna(accounts.iloc[0]["parent"])
    # The root has no task of its own: no mean to take, not 0.
    assert accounts.iloc[0]["tasks_submitted"] == 0 and pd.isna(accounts.iloc[0]["mean_wait_s"])
    assert len(result.timeline) == sum(len(run["timeline"]["times_s"]) for run in doc["policies"])
    jobs = result.window_jobs
    assert (jobs["wait_s"] == jobs["start_s"] - jobs["submit_s"]).all()
    assert (jobs["end_s"] >= jobs["start_s"]).all() and set(jobs["policy"]) == set(POLICIES)
    assert all(nodes == ["pool"] for nodes in jobs["nodes"])


TYPES = {
    "summary": {"policy": "category", "tasks_submitted": "Int64", "mean_wait_s": "float64", "util_cpu": "float64", "livetree_events": "Int64"},
    "users": {"user": "string", "tasks_started": "int64", "mean_dominant_share": "float64", "held_cpu": "float64", "charged": "float64"},
    "accounts": {"account": "string", "parent": "string", "users": "int64", "delivered": "float64"},
    "timeline": {"time_s": "float64", "util_cpu": "float64"},
    "shares": {"time_s": "float64", "user": "string", "dominant_share": "float64"},
    "window_jobs": {"id": "uint64", "user": "string", "start_s": "float64", "nodes": "object"},
    "jobs": {"policy": "category", "job_id": "uint64", "user": "string", "starting_time": "float64", "success": "bool"},
    "quantiles": {"policy": "category", "quantile": "float64", "wait_s": "float64"},
}


@pytest.mark.parametrize("table", sorted(TYPES))
def test_every_table_has_its_documented_types(small_log, table):
    result = fairshare.replay(small_log, ["drf"], shares=SHARES, progress=False)
    frame = getattr(result, table)
    assert len(frame) > 0
    for column, dtype in TYPES[table].items():
        assert str(frame[column].dtype) == dtype, (column, frame[column].dtype)
    documented = documented_columns(f"Result.{table}")
    for column in frame.columns:
        name = re.sub(r"^(util|held|requested|allocated)_(?!number_of|nodes$|time$|resources$)\w+$", r"\1_<resource>", column)
        assert documented.get(name) == str(frame[column].dtype), (table, column, documented)


def test_without_a_window_there_are_no_jobs_but_the_columns_are_there(small_log):
    jobs = fairshare.replay(small_log, ["drf"], gantt=False, progress=False).window_jobs
    assert len(jobs) == 0 and "wait_s" in jobs.columns and str(jobs["id"].dtype) == "uint64"


def test_every_job_has_a_row_per_policy_and_the_rows_add_up_to_the_summary(small_log):
    result = fairshare.replay(small_log, POLICIES, horizon="20m", progress=False)
    jobs = result.jobs
    assert len(jobs) == 40 * len(POLICIES)
    assert list(jobs["policy"].unique()) == POLICIES, "policies in the order given"
    trace = fairshare.read(small_log).frame()
    for row in result.summary.itertuples():
        own = jobs[jobs["policy"] == row.policy].set_index("job_id").sort_index()
        assert own.index.tolist() == trace["id"].tolist()
        # The trace's own clock, as read() gives it: the rows join back to the trace.
        assert (own["submission_time"].to_numpy() == trace["submit_s"].to_numpy()).all()
        states = own["final_state"].value_counts()
        assert states.get("beyond_horizon", 0) == row.tasks_beyond_horizon > 0
        assert states.get("finished", 0) == row.tasks_completed
        assert states.get("unfinished", 0) + states.get("never_started", 0) == row.tasks_unfinished
        submitted = own[own["final_state"] != "beyond_horizon"]
        assert submitted["waiting_time"].mean() == pytest.approx(row.mean_wait_s, rel=1e-12)
        assert submitted["bounded_slowdown"].mean() == pytest.approx(row.mean_slowdown, rel=1e-12)
        finished = own[own["final_state"] == "finished"]
        assert (finished["finish_time"] == finished["starting_time"] + finished["execution_time"]).all()
        assert own.loc[own["final_state"] == "unfinished", "finish_time"].isna().all()


def test_the_per_job_table_joins_the_users_and_the_trace_on_every_row(tmp_path):
    # Numeric user, queue and partition names: the ones a reader once typed as numbers.
    lines = ["; MaxProcs: 4"]
    for i in range(1, 13):
        procs, user = 1 + i % 2, 10 + i % 3
        fields = [i, i * 30, -1, 100 + 10 * i, procs, -1, -1, procs, 400, -1, 1, user, 1, 1, 1 + i % 2, 2 + i % 2, -1, -1]
        lines.append(" ".join(map(str, fields)))
    log = tmp_path / "joins.swf"
    log.write_text("\n".join(lines) + "\n")
    given = ["sdrf:delta=0.999999", "fifo", "drf"]
    result = fairshare.replay(log, given, progress=False)
    jobs, users, trace = result.jobs, result.users, fairshare.read(log).frame()
    assert len(jobs) == 12 * len(given)
    assert len(jobs.merge(users, on=["policy", "user"])) == len(jobs)
    keys = ["user", "queue", "partition"]
    joined = jobs.merge(trace, left_on=["job_id", *keys], right_on=["id", *keys])
    assert len(joined) == len(jobs)
    for table in ["summary", "quantiles", "users", "timeline", "shares", "window_jobs"]:
        assert getattr(result, table)["policy"].dtype == jobs["policy"].dtype, table
    assert list(jobs["policy"].cat.categories) == given, "the order given, not the alphabet's"
    assert list(jobs.groupby("policy", observed=True).size().index) == given
    for column in keys:
        assert jobs[column].dtype == trace[column].dtype, column
    assert jobs["user"].dtype == users["user"].dtype and jobs["job_id"].dtype == trace["id"].dtype


def test_the_per_job_table_is_the_command_s_to_the_byte_and_can_be_kept_or_skipped(small_log, tmp_path):
    kept = tmp_path / "jobs.csv"
    result = fairshare.replay(small_log, POLICIES, jobs=kept, progress=False)
    subprocess.run([cli(), "replay", small_log, *sum((["--policy", p] for p in POLICIES), []), "--jobs", tmp_path / "cli.csv"], check=True, capture_output=True)
    assert kept.read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert len(result.jobs) == 40 * len(POLICIES)
    skipped = fairshare.replay(small_log, ["drf"], jobs=False, progress=False)
    with pytest.raises(ValueError, match="jobs=True"):
        skipped.jobs


def test_a_policy_given_twice_is_refused(small_log):
    with pytest.raises(fairshare.InputError, match='policy "drf" is given twice'):
        fairshare.replay(small_log, ["drf", "fifo", "drf"], progress=False)


def test_the_fairness_measures_tell_fifo_from_drf(small_log):
    summary = fairshare.replay(small_log, ["fifo", "drf"], progress=False).summary.set_index("policy")
    assert 0 < summary.loc["fifo", "jain_slowdown"] <= 1 and 0 <= summary.loc["drf", "time_below_share"] <= 1
    assert summary.loc["fifo", "jain_slowdown"] != summary.loc["drf", "jain_slowdown"]


def test_progress_reaches_the_total_from_the_worker_threads(small_log):
    # The runs report from rayon's threads, which take the GIL to call back: this returns only
    # because the replay runs with the GIL released.
    told = []
    fairshare.replay(small_log, ["drf", "fifo"], progress=lambda done, total: told.append((done, total)))
    totals = {total for _, total in told}
    assert len(totals) == 1 and sum(done for done, _ in told) == totals.pop()


def test_a_progress_callback_that_raises_is_an_error(small_log):
    def broken(done, total):
        raise RuntimeError("no screen")

    with pytest.raises(fairshare.InputError, match="progress callback.*no screen"):
        fairshare.replay(small_log, ["drf"], progress=broken)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"policies": ["drf", "nosuch"]}, "nosuch"),
        ({"scheduler": "magic"}, "scheduler \"magic\": expected fill, easy, conservative or slurm"),
        ({"capacity": "cpu=4", "capacity_fraction": 0.5}, "give at most one"),
        ({"capacity_fraction": -1.0}, "positive number"),
        ({"horizon": "soon"}, "horizon"),
        ({"horizon": "1h", "drain": True}, "one or the other"),
        ({"gantt": "tomorrow"}, "gantt"),
        ({"policies": []}, "at least one"),
        ({"format": "csv"}, "format \"csv\": expected"),
        ({"swf_cpus": "most"}, "swf_cpus"),
    ],
)
def test_bad_options_are_input_errors_that_say_what(small_log, options, says):
    policies = options.pop("policies", ["drf"])
    with pytest.raises(fairshare.InputError, match=says) as caught:
        fairshare.replay(small_log, policies, progress=False, **options)
    assert (caught.value.file, caught.value.line, caught.value.field) == (None, None, None)


def test_a_bad_record_is_an_input_error_naming_the_file_and_line(tmp_path, small_log):
    lines = small_log.read_text().splitlines()
    lines[5] = "7 four -1 100 1"
    lines[9] = "9 540 -1 100 two -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1"
    bad = tmp_path / "bad.swf"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(fairshare.InputError, match=r"bad\.swf:6: expected 18 or 21 fields, found 5") as caught:
        fairshare.replay(bad, ["drf"], progress=False)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(bad), 6, None)
    assert "lenient=True skips" in str(caught.value)
    del lines[5]
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(fairshare.InputError, match=r"bad\.swf:9: .*two") as caught:
        fairshare.replay(bad, ["drf"], progress=False)
    assert (caught.value.file, caught.value.line) == (str(bad), 9)
    assert caught.value.field == "5 (allocated processors)"
    result = fairshare.replay(bad, ["drf"], lenient=True, progress=False)
    assert result.doc["tasks_found"] == 39 and result.doc["tasks_skipped"] == {"malformed: field 5 (allocated processors)": 1}


def test_a_missing_trace_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(fairshare.InputError, match="nothere.swf") as caught:
        fairshare.replay(tmp_path / "nothere.swf", progress=False)
    assert caught.value.file == str(tmp_path / "nothere.swf") and caught.value.line is None


def test_warnings_are_python_warnings(tmp_path):
    log = tmp_path / "big.swf"
    log.write_text("; MaxProcs: 4\n" + "".join(f"{i} {i} -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 5)))
    with pytest.warns(UserWarning):
        result = fairshare.replay(log, ["drf"], progress=False)
    assert result.warnings and json.loads(result.json())["policies"][0]["tasks_never_fit"] == 4


@pytest.mark.parametrize("option", ["shares", "machines"])
def test_a_wrong_share_file_or_catalogue_is_an_input_error_naming_it(tmp_path, small_log, option):
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[accounts\n")
    with pytest.raises(fairshare.InputError, match="wrong.toml") as caught:
        fairshare.replay(small_log, ["drf"], progress=False, **{option: wrong})
    assert caught.value.file == str(wrong)


def test_without_pandas_the_results_are_there_and_a_table_says_how_to_get_it(small_log):
    # A fresh interpreter in which `import pandas` fails, as where pandas is not installed.
    script = f"""
import sys
import threading
sys.modules["pandas"] = None
import fairshare
result = fairshare.replay({str(small_log)!r}, ["drf"], progress=False)
assert result.doc["policies"][0]["tasks_submitted"] == 40
try:
    result.summary
except ImportError as error:
    print(error)
"""
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    assert "pip install pandas" in out.stdout


def test_one_policy_may_be_given_alone(small_log):
    alone = fairshare.replay(small_log, "fifo", progress=False)
    assert alone.summary["policy"].tolist() == ["fifo"]


def test_a_policy_error_names_the_policy_once(small_log):
    with pytest.raises(fairshare.InputError) as caught:
        fairshare.replay(small_log, ["sdrf:delta=2"], progress=False)
    message = str(caught.value)
    assert message.count('policy "sdrf:delta=2"') == 1, message


def test_the_as_recorded_row_and_the_quantiles_hold_the_json_s_numbers(tmp_path, small_log):
    lines = small_log.read_text().splitlines()
    waited = [" ".join("30" if i == 2 else f for i, f in enumerate(line.split())) for line in lines[1:]]
    log = tmp_path / "recorded.swf"
    log.write_text("\n".join([lines[0], *waited]) + "\n")
    result = fairshare.replay(log, ["drf"], progress=False)
    recorded = result.doc["setting"]["recorded"]
    row = result.summary.set_index("policy").loc["as recorded"]
    assert row["mean_wait_s"] == recorded["mean_wait_s"] == 30.0
    assert row["tasks_started"] == recorded["started"] == 40
    assert pd.isna(row["tasks_completed"]) and pd.isna(row["util_cpu"])
    quantiles = result.quantiles
    drf = quantiles[quantiles["policy"] == "drf"]
    assert drf["wait_s"].tolist() == result.doc["policies"][0]["wait_quantiles_s"]
    assert drf["quantile"].tolist()[:3] == [0.0, 0.05, 0.1]
    mine = quantiles[quantiles["policy"] == "as recorded"]["wait_s"].tolist()
    assert mine == recorded["wait_quantiles_s"]



class PythonFifo(fairshare.Ranker):
    """First come, first served, written in Python: the head job's submit time."""

    name = "python-fifo"

    def __init__(self) -> None:
        self.calls = 0

    def priority(self, user, holdings, waiting_since, size):
        self.calls += 1
        return waiting_since


class LargestFirst:
    """Not a subclass: any object with a priority method is a ranker."""

    def priority(self, user, holdings, waiting_since, size):
        return -size


def without_names(doc: dict) -> list:
    """Each policy's results with its name left out."""
    return [{k: v for k, v in p.items() if k != "policy"} for p in doc["policies"]]


def test_a_ranker_written_in_python_runs_through_the_same_engine(small_log):
    fifo = PythonFifo()
    result = fairshare.replay(small_log, ["fifo", fifo, LargestFirst()], gantt=False)
    names = [p["policy"] for p in result.doc["policies"]]
    assert names == ["fifo", "python-fifo", "LargestFirst"]
    same, python, largest = without_names(result.doc)
    assert python == same, "FIFO in Python is the registry's FIFO, number for number"
    assert largest != same, "another order gives other waits"
    assert fifo.calls > 0
    jobs = result.jobs
    assert set(jobs["policy"]) == set(names)
    assert len(jobs[jobs["policy"] == "python-fifo"]) == len(jobs[jobs["policy"] == "fifo"])


class PythonDrf(fairshare.Ranker):
    """Dominant resource fairness, written in Python: the largest share held."""

    name = "python-drf"

    def priority(self, user, holdings, waiting_since, size):
        return max(holdings)


def test_a_drf_written_in_python_ties_as_the_registry_s_drf(tmp_path):
    # Each job takes the whole machine. When the first ends, users 7 and 3 both hold nothing:
    # user 7, first in the trace, goes first, though user 3's job waited longer.
    jobs = [(1, 0, 7), (2, 10, 3), (3, 20, 7), (4, 30, 3), (5, 40, 7), (6, 45, 5)]
    lines = ["; MaxProcs: 4"]
    for id, submit, user in jobs:
        lines.append(" ".join(map(str, [id, submit, -1, 100, 4, -1, -1, 4, 200, -1, 1, user, 1, 1, 1, 1, -1, -1])))
    log = tmp_path / "ties.swf"
    log.write_text("\n".join(lines) + "\n")
    result = fairshare.replay(log, ["drf", PythonDrf()], gantt=False, jobs=False, progress=False)
    registry, python = without_names(result.doc)
    assert json.dumps(python) == json.dumps(registry)
    waits = {user["id"]: user["mean_wait_s"] for user in registry["users"]}
    assert waits["7"] < waits["3"], "the tie went to the user first in the trace"


def test_python_rankers_in_one_call_run_one_after_another(tmp_path):
    called = []

    class Logged(fairshare.Ranker):
        def __init__(self, name):
            self.name = name

        def priority(self, user, holdings, waiting_since, size):
            called.append(self.name)
            return waiting_since

    # Long enough that two rankers on parallel threads would take turns at the GIL.
    lines = ["; MaxProcs: 8"]
    for i in range(1, 5001):
        run, procs = 100 + (i * 37) % 900, 1 + i % 4
        lines.append(" ".join(map(str, [i, i * 60, -1, run, procs, -1, -1, procs, 2 * run, -1, 1, 1 + i % 5, 1, 1, 1, 1, -1, -1])))
    log = tmp_path / "long.swf"
    log.write_text("\n".join(lines) + "\n")
    result = fairshare.replay(log, [Logged("a"), "drf", Logged("b")], gantt=False, jobs=False, progress=False)
    assert [p["policy"] for p in result.doc["policies"]] == ["a", "drf", "b"]
    assert called.count("a") > 100 and called.count("b") > 100
    turns = sum(1 for before, after in zip(called, called[1:]) if before != after)
    assert turns == 1, f"{turns} turns between the two rankers' calls"


def test_a_python_ranker_beside_the_registry_s_keeps_its_thread_state_from_call_to_call(small_log):
    # On a thread Python does not know, each call would create and discard a thread state (ten
    # times the cost of the call), and what the ranker keeps thread-local would go with it.
    local, counts = threading.local(), []

    class Counting(fairshare.Ranker):
        name = "counting"

        def priority(self, user, holdings, waiting_since, size):
            local.calls = getattr(local, "calls", 0) + 1
            counts.append(local.calls)
            return waiting_since

    fairshare.replay(small_log, ["drf", Counting()], gantt=False, jobs=False, progress=False)
    assert len(counts) > 10 and counts == list(range(1, len(counts) + 1))


def test_a_python_ranker_is_told_the_users_by_name_and_their_holdings(small_log):
    seen = []

    class Spy(fairshare.Ranker):
        name = "spy"

        def priority(self, user, holdings, waiting_since, size):
            seen.append((user, list(holdings), waiting_since, size))
            return 0.0

    fairshare.replay(small_log, Spy(), gantt=False, jobs=False)
    users = {user for user, *_ in seen}
    assert users == {"1", "2", "3", "4", "5"}, users
    assert all(len(h) == 1 and all(0.0 <= x <= 1.0 for x in h) for _, h, _, _ in seen)
    assert all(0.0 < size <= 0.5 for *_, size in seen), "1 to 4 of 8 processors"
    assert min(w for _, _, w, _ in seen) == 60.0, "the first job's submit time"


def test_an_exception_in_a_python_ranker_is_raised_from_replay(small_log):
    class Broken(fairshare.Ranker):
        name = "broken"

        def priority(self, user, holdings, waiting_since, size):
            return 1 / 0

    with pytest.raises(ZeroDivisionError):
        fairshare.replay(small_log, ["drf", Broken()], gantt=False, jobs=False)


@pytest.mark.parametrize("value", ["soon", None, float("nan")])
def test_a_python_priority_that_is_not_a_number_is_refused(small_log, value):
    class Wrong(fairshare.Ranker):
        name = "wrong"

        def priority(self, user, holdings, waiting_since, size):
            return value

    with pytest.raises(ValueError, match=r"wrong\.priority returned .*: expected a number"):
        fairshare.replay(small_log, Wrong(), gantt=False, jobs=False)


def test_a_python_ranker_needs_a_name_of_its_own_and_a_priority_method(small_log):
    class Drf(fairshare.Ranker):
        name = "drf"

        def priority(self, user, holdings, waiting_since, size):
            return max(holdings)

    with pytest.raises(fairshare.InputError, match=r"policies\[1\].*registered policy's name"):
        fairshare.replay(small_log, ["fifo", Drf()], gantt=False, jobs=False)
    with pytest.raises(fairshare.InputError, match=r"policies\[0\]: expected a policy name or an object"):
        fairshare.replay(small_log, [42], gantt=False, jobs=False)
    with pytest.raises(fairshare.InputError, match="given twice"):
        fairshare.replay(small_log, [PythonFifo(), PythonFifo()], gantt=False, jobs=False)


def test_slurmctlds_log_times_a_dumps_jobs_and_the_loops_turns_as_the_cli_does(tmp_path):
    dump = tmp_path / "sacct.txt"
    dump.write_text(
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State\n"
        "1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|cpu=4,node=1|cpu|COMPLETED\n"
        "2|bob|a|2026-01-01T00:00:30|2026-01-01T00:01:01|2026-01-01T00:01:11|cpu=4,node=1|cpu|COMPLETED\n"
    )
    lines = (
        "[2026-01-01T00:00:00.200] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=300\n"
        "[2026-01-01T00:00:00.600] sched: Allocate JobId=1 NodeList=n1 #CPUs=4 Partition=cpu\n"
        "[2026-01-01T00:00:30.100] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=1 usec=300\n"
        "[2026-01-01T00:01:00.900] _job_complete: JobId=1 done\n"
        "[2026-01-01T00:01:01.600] sched: Allocate JobId=2 NodeList=n1 #CPUs=4 Partition=cpu\n"
        "[2026-01-01T00:01:11.650] _job_complete: JobId=2 done\n"
    )
    log = tmp_path / "slurmctld.log.gz"
    log.write_bytes(gzip.compress(lines.encode()))
    # The main scheduler alone: the backfill's first cycle would fall on the first submission.
    conf = tmp_path / "slurm.conf"
    conf.write_text("SchedulerType=sched/builtin\n")
    common = dict(capacity="cpu=4,mem=0,gpu=0", scheduler="slurm", slurm_conf=conf, drain=True, progress=False)
    result = fairshare.replay(dump, ["fifo"], slurmctld_log=log, **common)
    args = [dump, "--policy=fifo", "--capacity", "cpu=4,mem=0,gpu=0", "--scheduler=slurm", "--slurm-conf", conf, "--drain"]
    same_as_cli(tmp_path, result, [*args, "--slurmctld-log", log])
    starts = result.jobs.set_index("user")["starting_time"] - 1_767_225_600
    assert starts["alice"] == pytest.approx(0.6) and starts["bob"] == pytest.approx(61.6)
    whole = fairshare.replay(dump, ["fifo"], **common).jobs.set_index("user")["starting_time"] - 1_767_225_600
    assert whole["alice"] == 1 and whole["bob"] == 62, "without the log, at the loop's whole seconds"
    with pytest.raises(fairshare.InputError, match="add scheduler=\"slurm\""):
        fairshare.replay(dump, ["fifo"], capacity="cpu=4,mem=0,gpu=0", slurmctld_log=log, progress=False)
    (tmp_path / "bad.log").write_text("[2026-01-01T00:00:01] sched: Allocate JobId=1\n")
    with pytest.raises(fairshare.InputError, match="slurmctld_log: .*bad.log: line 1"):
        fairshare.replay(dump, ["fifo"], slurmctld_log=tmp_path / "bad.log", **common)
    swf = tmp_path / "jobs.swf"
    swf.write_text("1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(fairshare.InputError, match="not of a swf trace"):
        fairshare.replay(swf, ["fifo"], slurmctld_log=log, scheduler="slurm", progress=False)


def small_bundle(folder):
    """A site bundle of three users on one 4-CPU node, as ``fairshare slurm collect`` writes
    one (without its manifest, as the shell commands make it)."""
    folder.mkdir()
    day = "2026-01-01T00:"
    (folder / "sacct.txt").write_text(
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n"
        f"1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu|COMPLETED\n"
        f"2|bob|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu|COMPLETED\n"
        f"3|carol|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu|COMPLETED\n"
        f"4_1|bob|a|{day}01:00|{day}01:40|{day}01:50|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED\n"
        f"5|carol|a|{day}01:01|{day}01:50|{day}02:00|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED\n"
    )
    (folder / "config.txt").write_text(
        "ClusterName=emu\nPriorityWeightFairshare=10000\nPriorityDecayHalfLife=00:10:00\n"
        "PriorityCalcPeriod=00:00:30\nNodeName=n1 CPUs=4\n"
        "PartitionName=cpu Nodes=n1 Default=YES TRESBillingWeights=CPU=2.0\n"
    )
    (folder / "assoc.txt").write_text(
        "emu|root|||1||\nemu|a|||1|root|\nemu|a|alice||1|a|\nemu|a|bob||5|a|\nemu|a|carol||10|a|\n"
    )
    (folder / "qos.txt").write_text("normal|1.000000|0\n")
    return folder


def test_a_slurm_whatif_is_the_commands_and_joins_back_to_the_dump(tmp_path):
    bundle = small_bundle(tmp_path / "site")
    result = fairshare.slurm_whatif(bundle, ["sdrf"], progress=False)
    out = subprocess.run(
        [cli(), "slurm", "what-if", bundle, "--policy", "sdrf", "--json", "-"], capture_output=True, text=True, check=True
    )
    assert result.json() == out.stdout, "the document of the command, to the byte"
    assert result.summary["policy"].tolist()[:2] == ["as-slurm", "sdrf"]
    assert result.trust["jobs"] == 5 and result.trust["contested_order"] is not None
    assert result.trust_users["user"].tolist() == ["alice", "bob", "carol"]
    assert any("decay=half-life:600,refresh=60" in line for line in result.taken)
    jobs = result.jobs
    assert set(jobs["job_id"]) == {"1", "2", "3", "4_1", "5"}, "Slurm's JobIDs, an array task's as 4_1"
    with pytest.raises(fairshare.InputError, match="assoc.txt is missing"):
        (bundle / "assoc.txt").unlink()
        fairshare.slurm_whatif(bundle, progress=False)
