"""``fairshare.replay``: a trace replayed under several policies, with the results as the
``fairshare replay`` command writes them and as pandas DataFrames."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from . import _native
from ._frames import frame, pandas
from ._progress import Bar, callback
from ._ranker import Ranker
from ._native import InputError

Path = Union[str, "os.PathLike[str]"]


class Result:
    """A finished replay: ``doc`` is the summary ``fairshare replay --json`` writes (``json()``
    its text, to the byte), and its tables are pandas DataFrames, one row per policy, user,
    account, sample or job, with a ``policy`` column (docs/python.md lists their columns)."""

    def __init__(self, native: _native.Replayed, jobs: Optional[str] = None, folder=None) -> None:
        self._native = native
        self._jobs_path = jobs
        self._folder = folder  # the temporary folder of the per-job table, removed with the result
        self._json = native.json()
        self.doc: dict[str, Any] = json.loads(self._json)
        """The summary, as ``fairshare replay --json`` writes it."""
        self.notes: list[str] = native.notes()
        """What the reader and the assembly decided (capacity, shares, queues), in words."""
        self.warnings: list[str] = native.warnings()
        """What the results warn of, as the command line says it (options named as keyword
        arguments)."""

    def json(self) -> str:
        """The summary's JSON text, byte for byte what ``fairshare replay --json`` writes."""
        return self._json

    def to_html(self, path: Path) -> None:
        """Writes the self-contained HTML report ``fairshare replay --report`` writes."""
        with open(os.fspath(path), "w", encoding="utf-8") as file:
            file.write(self._native.html())

    def table(self) -> str:
        """The table ``fairshare replay`` prints."""
        return self._native.table()

    @cached_property
    def stats(self) -> list[dict[str, Any]]:
        """Each run's wall-clock seconds and events per second, as ``--stats`` writes them."""
        return json.loads(self._native.stats())

    def __repr__(self) -> str:
        return self.table()

    @property
    def _resources(self) -> list[str]:
        return self.doc["setting"]["resources"]

    @cached_property
    def summary(self):
        """One row per policy: tasks, waits, slowdown, utilization of each resource, the
        fairness measures (Jain's index of 1/slowdown and of service while waiting, the time
        below share, Jain's index of mean dominant shares); then, when the trace records its own schedule,
        the ``"as recorded"`` row of ``table()`` (its jobs, starts, waits, slowdown and
        response; the rest missing)."""
        rows = []
        for run in self.doc["policies"]:
            row = {key: run.get(key, 0) for key in SUMMARY}
            row.update({f"util_{r}": run["utilization"][r] for r in self._resources})
            row["livetree_events"] = run.get("livetree_events")
            rows.append(row)
        recorded = self.doc["setting"].get("recorded", {})
        if recorded.get("started"):
            row = {key: None for key in SUMMARY}
            row.update({key: recorded[key] for key in RECORDED_MEANS})
            row.update(policy=AS_RECORDED, tasks_submitted=recorded["jobs"], tasks_started=recorded["started"])
            rows.append(row)
        return self._frame(rows, {**SUMMARY, **self._per_resource("util_"), "livetree_events": "Int64"})

    @cached_property
    def quantiles(self):
        """One row per policy (and ``"as recorded"``) and quantile 0, 0.05, …, 1: the waits' and
        bounded slowdowns' nearest-rank percentiles, as ``wait_quantiles_s`` and
        ``slowdown_quantiles`` of the JSON."""
        recorded = dict(self.doc["setting"].get("recorded", {}), policy=AS_RECORDED)
        rows = [
            {"policy": run["policy"], "quantile": i / (len(waits) - 1), "wait_s": wait, "slowdown": slowdown}
            for run in [*self.doc["policies"], recorded]
            for waits in [run.get("wait_quantiles_s", [])]
            for i, (wait, slowdown) in enumerate(zip(waits, run.get("slowdown_quantiles", [])))
        ]
        return self._frame(rows, QUANTILES)

    @cached_property
    def users(self):
        """One row per policy and user: tasks, wait and slowdown (mean, median, p95), mean
        response, the time-averaged dominant share and fraction held of each resource, the time
        it waited and how much of it below its share, its service while waiting, and what a
        fairshare policy charged (NaN under others)."""
        rows = []
        for run in self.doc["policies"]:
            for user in run["users"]:
                row = {key: user.get(key, 0) for key in USERS}
                row.update(policy=run["policy"], user=user["id"])
                row["service_while_waiting"] = user.get("service_while_waiting", float("nan"))
                held = user.get("mean_held") or [0.0] * len(self._resources)
                row.update({f"held_{r}": v for r, v in zip(self._resources, held)})
                row["charged"] = user.get("charged", float("nan"))
                rows.append(row)
        return self._frame(rows, {**USERS, **self._per_resource("held_"), "charged": "float64"})

    @cached_property
    def accounts(self):
        """One row per policy and account of the share file (root first; empty without one):
        entitlement against what was delivered, its users' tasks and waits."""
        rows = []
        for run in self.doc["policies"]:
            for account in run.get("accounts", []):
                row = {key: account.get(key, 0) for key in ACCOUNTS}
                if not account.get("tasks_submitted"):  # no task of its own: no mean to take
                    row.update({key: float("nan") for key in ACCOUNT_MEANS})
                row.update(policy=run["policy"], account=account["name"])
                row["parent"] = account["parent"]
                rows.append(row)
        return self._frame(rows, ACCOUNTS)

    @cached_property
    def timeline(self):
        """One row per policy and sample: seconds from the first event and the fraction of each
        resource in use."""
        rows = []
        for run in self.doc["policies"]:
            line = run["timeline"]
            for i, time in enumerate(line["times_s"]):
                row = {"policy": run["policy"], "time_s": time}
                row.update({f"util_{r}": v[i] for r, v in zip(self._resources, line["utilization"])})
                rows.append(row)
        return self._frame(rows, {**TIMELINE, **self._per_resource("util_")})

    @cached_property
    def shares(self):
        """One row per policy (and ``"as recorded"``, the trace's own schedule, when it records
        one and was kept in memory), sample and user drawn (the users with the most tasks): the
        user's dominant share at that time."""
        recorded = self.doc["setting"]["recorded"].get("shares")
        lines = [(run["policy"], run["timeline"]) for run in self.doc["policies"]]
        lines += [(AS_RECORDED, recorded)] if recorded else []
        rows = [
            {"policy": policy, "time_s": time, "user": series["id"], "dominant_share": value}
            for policy, line in lines
            for series in line["dominant_share"]
            for time, value in zip(line["times_s"], series["values"])
        ]
        return self._frame(rows, SHARES)

    @cached_property
    def jobs(self):
        """One row per job of the trace and policy, as ``fairshare replay --jobs`` writes it:
        Batsim's ``jobs.csv`` columns (``job_id``, ``submission_time``, ``starting_time``,
        ``waiting_time``, ``stretch``, …) plus user, account, queue, requested and allocated
        resources, killed at the walltime and ``final_state`` (``finished``, ``unfinished``,
        ``never_started``, ``cancelled``, ``never_fits``, ``beyond_horizon``); times in seconds of the trace's
        own clock, as ``read()`` gives them. Read from the file the replay streamed it to (see
        ``replay(jobs=...)``); docs/python.md lists the columns."""
        if self._jobs_path is None:
            raise ValueError("this replay wrote no per-job table: replay(..., jobs=True) writes one")
        pd = pandas()
        resources = self._resources
        dtypes = {**JOBS, **{f"requested_{r}": _REAL for r in resources}, **{f"allocated_{r}": _REAL for r in resources}}
        dtypes["policy"] = self._policy_type(recorded=False)
        # The trace's own job ids: numbers for SWF and Google, a Slurm dump's JobID (``123_4``
        # for an array's task) as text unless every one of them is a number.
        dtypes["job_id"] = _TEXT
        table = pd.read_csv(self._jobs_path, dtype=dtypes, keep_default_na=False, na_values=[""])
        if table["job_id"].str.fullmatch(r"[0-9]+").all():
            table["job_id"] = table["job_id"].astype("uint64")
        return table.astype({"killed_at_walltime": "bool", "success": "bool"})

    @cached_property
    def window_jobs(self):
        """One row per policy and job of the view of the machines (the ``gantt`` window):
        submit, start and end in seconds from the first event, the wait, the nodes it held and
        its first reservation (NaN without one)."""
        view = self.doc["setting"].get("machine_view")
        if view is None:
            return self._frame([], WINDOW_JOBS)
        rows = [
            _job(run["policy"], job, view) for run in self.doc["policies"] for job in run.get("jobs", [])
        ]
        return self._frame(rows, WINDOW_JOBS)

    def _per_resource(self, prefix: str) -> dict[str, str]:
        return {f"{prefix}{r}": "float64" for r in self._resources}

    def _policy_type(self, recorded: bool):
        """The ``policy`` column's type in every table: a category of the policies in the order
        given, then ``"as recorded"`` for a table that holds rows of the trace's own schedule."""
        names = [run["policy"] for run in self.doc["policies"]]
        return pandas().CategoricalDtype(names + [AS_RECORDED] * recorded)

    def _frame(self, rows: list[dict[str, Any]], schema: dict[str, str]):
        """``frame`` of the rows with the ``policy`` column of ``_policy_type``."""
        recorded = any(row["policy"] == AS_RECORDED for row in rows)
        return frame(rows, {**schema, "policy": self._policy_type(recorded)})


def _job(policy: str, job: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
    """One job of the view of the machines as a row of ``Result.window_jobs``."""
    origin = view["origin"]
    reserved = job.get("first_reserved")
    return {
        "policy": policy,
        "id": job["id"],
        "user": view["users"][job["user"]],
        "submit_s": (job["submit"] - origin) / 1e6,
        "start_s": (job["start"] - origin) / 1e6,
        "end_s": (job["end"] - origin) / 1e6,
        "wait_s": (job["start"] - job["submit"]) / 1e6,
        "nodes": [view["nodes"][i]["name"] for i, _ in job["placed"]],
        "first_reserved_s": float("nan") if reserved is None else (reserved - origin) / 1e6,
    }


_COUNT, _REAL, _TEXT = "int64", "float64", "string"

AS_RECORDED = "as recorded"
"""The ``policy`` of the rows that hold what the trace's own scheduler did."""

RECORDED_MEANS = ("mean_wait_s", "p95_wait_s", "mean_slowdown", "mean_response_s")
"""The figures the trace records of its own schedule, as ``Result.summary`` names them."""

SUMMARY = {
    "policy": _TEXT,
    **dict.fromkeys(
        [
            "tasks_submitted",
            "tasks_started",
            "tasks_completed",
            "tasks_unfinished",
            "tasks_never_fit",
            "tasks_cancelled",
            "tasks_beyond_horizon",
            "tasks_killed_at_walltime",
        ],
        "Int64",
    ),
    **dict.fromkeys(
        [
            "mean_wait_s",
            "p95_wait_s",
            "user_mean_wait_s",
            "mean_slowdown",
            "mean_response_s",
            "makespan_s",
            "jain_slowdown",
            "jain_service",
            "time_below_share",
            "jain_dominant_share",
            "simulated_s",
        ],
        _REAL,
    ),
    "events": "Int64",
}
"""The columns of ``Result.summary`` before ``util_<resource>`` and ``livetree_events``."""

QUANTILES = {"policy": _TEXT, "quantile": _REAL, "wait_s": _REAL, "slowdown": _REAL}
"""The columns of ``Result.quantiles``."""

USERS = {
    "policy": _TEXT,
    "user": _TEXT,
    **dict.fromkeys(
        ["tasks_submitted", "tasks_started", "tasks_completed", "tasks_never_fit", "tasks_cancelled"], _COUNT
    ),
    **dict.fromkeys(
        [
            "mean_wait_s",
            "median_wait_s",
            "p95_wait_s",
            "mean_dominant_share",
            "mean_slowdown",
            "median_slowdown",
            "p95_slowdown",
            "mean_response_s",
            "waiting_s",
            "below_share_s",
            "service_while_waiting",
        ],
        _REAL,
    ),
}
"""The columns of ``Result.users`` before ``held_<resource>`` and ``charged``."""

ACCOUNTS = {
    "policy": _TEXT,
    "account": _TEXT,
    "parent": _TEXT,
    "entitlement": _REAL,
    "users": _COUNT,
    "tasks_submitted": _COUNT,
    "mean_wait_s": _REAL,
    "mean_slowdown": _REAL,
    "mean_response_s": _REAL,
    "delivered": _REAL,
}
"""The columns of ``Result.accounts``."""

ACCOUNT_MEANS = ("mean_wait_s", "mean_slowdown", "mean_response_s")
"""The columns of ``Result.accounts`` that are means over the account's own tasks: NaN for an
account without any (the root, and accounts that only hold others)."""

TIMELINE = {"policy": _TEXT, "time_s": _REAL}
"""The columns of ``Result.timeline`` before ``util_<resource>``."""

SHARES = {"policy": _TEXT, "time_s": _REAL, "user": _TEXT, "dominant_share": _REAL}
"""The columns of ``Result.shares``."""

WINDOW_JOBS = {
    "policy": _TEXT,
    "id": "uint64",
    "user": _TEXT,
    "submit_s": _REAL,
    "start_s": _REAL,
    "end_s": _REAL,
    "wait_s": _REAL,
    "nodes": "object",
    "first_reserved_s": _REAL,
}
"""The columns of ``Result.window_jobs``."""

JOBS = {
    "policy": "category",
    "id": "uint64",
    "job_id": "uint64",
    "task_index": "UInt64",
    "user": _TEXT,
    "account": _TEXT,
    "queue": _TEXT,
    "submission_time": _REAL,
    "requested_number_of_resources": _REAL,
    "requested_nodes": "UInt32",
    "requested_time": _REAL,
    "runtime": _REAL,
    "success": _COUNT,
    "final_state": "category",
    "killed_at_walltime": _COUNT,
    "starting_time": _REAL,
    "execution_time": _REAL,
    "finish_time": _REAL,
    "waiting_time": _REAL,
    "turnaround_time": _REAL,
    "stretch": _REAL,
    "bounded_slowdown": _REAL,
    "allocated_resources": "category",
    "partition": _TEXT,
    "qos": _TEXT,
    "recorded_starting_time": _REAL,
    "recorded_finish_time": _REAL,
    "starting_time_error": _REAL,
}
"""The types of the columns of ``Result.jobs`` as read (``requested_<resource>`` and
``allocated_<resource>`` are ``float64``; ``success`` and ``killed_at_walltime`` become
``bool``; ``policy`` is the category of ``Result._policy_type``). Identifiers are typed as in
every other table and ``Trace.frame()``, so that they join: names ``string``, ids ``uint64``."""


def replay(
    traces: Union[Path, Sequence[Path]],
    policies: Iterable[Union[str, Ranker]] = ("drf", "sdrf:delta=0.999999"),
    *,
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
    capacity_fraction: Optional[float] = None,
    capacity: Union[str, Mapping[str, float], None] = None,
    machines: Optional[Path] = None,
    shares: Union[str, Path] = "equal",
    queues: Optional[Path] = None,
    horizon: Union[str, int, None] = None,
    drain: bool = False,
    rule: str = "head-of-line",
    scheduler: str = "fill",
    placement: str | None = None,
    overrun: str = "kill",
    slurm_conf: Optional[Path] = None,
    site_weight: Optional[int] = None,
    site_interval: Union[str, int, None] = None,
    partitions: Optional[Path] = None,
    qos: Optional[Path] = None,
    max_tres: bool = False,
    slurmctld_log: Optional[Path] = None,
    gantt: Union[str, bool] = True,
    jobs: Union[bool, Path] = True,
    progress: Union[bool, Callable[[int, int], Any]] = True,
) -> Result:
    """Replays a workload trace under each policy and compares who waited, who finished and
    how full the cluster was, as ``fairshare replay`` does (same names, defaults, numbers).

    ``traces`` is a trace file or a list of them (every Google ``task_events`` part, in order);
    ``policies`` are policy specs such as ``"drf"`` or ``"sdrf:delta=0.999999"`` (see
    ``fairshare.policies()``) or policies written in Python (``fairshare.Ranker``), a list or
    one. The capacity is the trace's own machine unless one of
    ``capacity_fraction`` (of the mean demand R), ``capacity`` (``"cpu=120,mem=80"`` or a dict)
    or ``machines`` (a file, as ``--machines``: for a Slurm dump, the site's nodes and
    partitions too) is given. ``shares`` is ``"equal"``, a share file or ``"usage:FACTOR"``; ``horizon`` a duration (``"6h"``, seconds); ``drain`` runs until every
    task has finished. ``rule`` is ``"head-of-line"`` (a pass stops at a job that does not fit,
    the SDRF paper's rule) or ``"skip"`` (that user is passed over); ``scheduler`` ``"fill"``
    (progressive filling in the policy's order), ``"easy"`` or ``"conservative"`` (backfilling
    on requested walltimes) or ``"slurm"`` (Slurm's main and backfill schedulers and its
    multifactor job priority, with Slurm's defaults or those of ``slurm_conf``, a
    ``slurm.conf`` or the saved output of ``scontrol show config``, ``scontrol show node`` and
    ``scontrol show partition``, as ``--slurm-conf``; docs/slurm-prediction.md; ``site_weight``
    the weight of a policy's site factors there, as ``--site-weight``, and ``site_interval``
    how often the adapter writes them, as ``--site-interval``, ``"5s"`` or seconds);
    ``placement`` ``"first"``, ``"best"`` (the fullest node with room) or ``"slurm"`` (Slurm's
    ``select/cons_tres``; by default under ``scheduler="slurm"``, ``"first"`` otherwise); ``overrun`` ``"kill"`` (a job that ran past its walltime request is killed at it) or
    ``"extend"`` (it runs in full). For a Slurm dump, ``partitions`` (the saved output of
    ``scontrol show partition``), ``qos`` (of ``sacctmgr -P -n show qos
    format=Name,UsageFactor,Priority``) and ``max_tres`` (``PriorityFlags=MAX_TRES``) bill each
    job as Slurm does (the ``billing`` usage metric), as ``--partitions``, ``--qos`` and
    ``--max-tres``; the QOS priorities also give ``scheduler="slurm"`` its QOS factors.
    ``slurmctld_log`` (``scheduler="slurm"``, a Slurm dump), as ``--slurmctld-log``: the
    controller's own log over the dump's span, gzip'd or not, which times each job's
    submission, start and end to the millisecond and the main scheduler's and the
    backfill's passes at the turns it shows (and, when it begins before the controller
    started, the passes down the whole queue every ``sched_interval``;
    docs/slurm-prediction.md).
    ``swf_cpus`` picks an SWF log's processor count:
    ``"auto"`` (allocated when recorded, else requested), ``"allocated"`` or ``"requested"``;
    ``swf_memory`` its memory: ``"auto"`` (requested when recorded, else used; jobs that record
    none are then left out, with a warning), ``"requested"``, ``"used"`` or ``"none"`` (no
    memory resource, every job kept). ``gantt`` is the window whose jobs ``Result.jobs`` and
    the report's view of the machines show: ``True`` for the day in the middle of the trace (as
    ``--report``), ``"40d+12h"`` for another, ``False`` for none (as ``--json`` alone); those
    jobs are ``Result.window_jobs``. ``jobs`` streams every job's outcome under every policy to
    a CSV file as the replays run (``--jobs``), which ``Result.jobs`` reads: ``True`` to a
    temporary file removed with the result, a path to keep it there, ``False`` for none.
    ``progress`` shows a bar when tqdm is installed, or is a callable given the simulated
    seconds done since its last call and the total.

    The work runs with the GIL released, one policy per core (the Python rankers one after
    another, on one). Raises ``InputError`` for input
    fairshare cannot use, saying where and what was expected."""
    if isinstance(policies, str) or hasattr(policies, "priority"):  # one policy, not its letters
        policies = [policies]
    if isinstance(capacity, Mapping):
        capacity = ",".join(f"{name}={amount}" for name, amount in capacity.items())
    window = ("day" if gantt else None) if isinstance(gantt, bool) else gantt
    folder = tempfile.TemporaryDirectory(prefix="fairshare-jobs-") if jobs is True else None
    table = os.path.join(folder.name, "jobs.csv") if folder else (None if jobs is False else os.fspath(jobs))
    bar = Bar("s", "simulated")
    try:
        native = _native.replay_run(
            _paths(traces),
            list(policies),
            format=format,
            lenient=lenient,
            swf_cpus=swf_cpus,
            swf_memory=swf_memory,
            capacity_fraction=capacity_fraction,
            capacity=capacity,
            machines=_path(machines),
            shares=os.fspath(shares),
            queues=_path(queues),
            horizon=None if horizon is None else str(horizon),
            drain=drain,
            rule=rule,
            scheduler=scheduler,
            placement=placement,
            overrun=overrun,
            slurm_conf=_path(slurm_conf),
            site_weight=site_weight,
            site_interval=None if site_interval is None else str(site_interval),
            partitions=_path(partitions),
            qos=_path(qos),
            max_tres=max_tres,
            slurmctld_log=_path(slurmctld_log),
            gantt=window,
            jobs=table,
            progress=callback(progress, bar),
        )
    finally:
        bar.close()
    result = Result(native, table, folder)
    for warning in result.warnings:
        warnings.warn(warning, stacklevel=2)
    return result


def _path(path: Optional[Path]) -> Optional[str]:
    """A path given or not, as text."""
    return None if path is None else os.fspath(path)


def _paths(traces: Union[Path, Sequence[Path]]) -> list[str]:
    """One trace or several, as paths."""
    if isinstance(traces, (str, os.PathLike)):
        return [os.fspath(traces)]
    return [os.fspath(p) for p in traces]


__all__ = ["InputError", "Result", "replay"]
