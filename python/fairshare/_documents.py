"""The commands whose result is one document — ``priorities``, ``penalty``, ``simulate``,
``sweep`` and ``baa.timeline`` — with their JSON, table and report as the command writes them,
and DataFrames where the document is a table."""

from __future__ import annotations

import json
import os
import warnings
from functools import cached_property
from typing import Any, Iterable, Optional, Sequence, Union

from . import _native
from ._frames import frame
from ._progress import Bar, Callback, callback
from ._replay import SUMMARY, Path, _path, _paths

__all__ = ["Document", "Standings", "Sweep", "penalty", "priorities", "simulate", "sweep"]


class Document:
    """A command's result: ``doc`` is the JSON it writes with ``--json`` (``json()`` its
    text, to the byte), ``table()`` what it prints, ``to_html(path)`` its report."""

    def __init__(self, native: _native.Document) -> None:
        self._native = native
        self.doc: dict[str, Any] = json.loads(native.json())
        """The result, as the command's ``--json`` writes it."""

    def json(self) -> str:
        """The JSON text the command writes with ``--json``."""
        return self._native.json()

    def table(self) -> str:
        """The table the command prints."""
        return self._native.table()

    def to_html(self, path: Path) -> None:
        """Writes the HTML report the command writes with ``--report``; a ``ValueError`` for a
        command without one."""
        page = self._native.html()
        if page is None:
            raise ValueError(f"{type(self).__name__}: this command writes no HTML report")
        with open(os.fspath(path), "w", encoding="utf-8") as file:
            file.write(page)

    def __repr__(self) -> str:
        return self.table()


class Standings(Document):
    """``fairshare priorities``: every account and user of the share tree at the moment."""

    @cached_property
    def rows(self):
        """One row per account and user, root first, depth-first as ``sshare`` lists them."""
        return frame(self.doc["rows"], STANDINGS)


STANDINGS = {
    "name": "string",
    "parent": "string",
    "depth": "int64",
    "user": "bool",
    "raw_shares": "float64",
    "normalized_shares": "float64",
    "raw_usage": "float64",
    "normalized_usage": "float64",
    "effective_usage": "float64",
    "level_fs": "float64",
    "factor": "float64",
    "rank": "Int64",
}
"""The columns of ``Standings.rows``."""


class Sweep(Document):
    """``fairshare sweep``: the grid of capacity fractions × policies."""

    @cached_property
    def cells(self):
        """One row per cell: the capacity fraction, ε (NaN for the baseline) and the policy's
        results, as ``Result.summary`` has them."""
        rows = []
        for cell in self.doc["cells"]:
            run = cell["result"]
            row = {key: run.get(key, 0) for key in SUMMARY}
            row.update(fraction=cell["fraction"], epsilon=cell.get("epsilon"))
            rows.append(row)
        return frame(rows, {"fraction": "float64", "epsilon": "float64", **SUMMARY})


class BaaTimeline(Document):
    """``fairshare baa timeline``: what each user held, epoch by epoch."""

    @cached_property
    def allocations(self):
        """One row per epoch, user and resource: the amount the user held."""
        doc = self.doc
        rows = [
            {"epoch": epoch, "user": user, "resource": resource, "amount": amount}
            for epoch, held in enumerate(doc["allocations"])
            for user, amounts in zip(doc["users"], held)
            for resource, amount in zip(doc["resources"], amounts)
        ]
        return frame(rows, ALLOCATIONS)


ALLOCATIONS = {"epoch": "int64", "user": "string", "resource": "string", "amount": "float64"}
"""The columns of ``BaaTimeline.allocations``."""


def priorities(
    traces: Union[Path, Sequence[Path]],
    *,
    shares: Optional[Path] = None,
    at: Union[str, int, None] = None,
    function: str = "fair-tree",
    decay: str = "half-life:7d",
    usage: str = "cpu",
    machines: Optional[Path] = None,
    cluster: Optional[str] = None,
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
    policy: Optional[str] = None,
) -> Standings:
    """Each account's and user's fairshare standing at a moment of an accounting log (shares,
    usage, level fairshare, factor, rank), as ``fairshare priorities`` shows it.

    ``at`` is a duration after the log's first event (``"40d"``, seconds) or a date
    (``"2026-11-23T23:16:57"``); default the log's last event. ``function`` is the fairshare
    function (``fair-tree``, ``slurm-classic``, ``pbs``, ``metacentrum``, ``htcondor``,
    ``htcondor:floor=0.25`` or ``grid-engine``; ``policy=`` is its old name, still taken with a
    ``DeprecationWarning``), ``decay`` how usage fades (``half-life:7d``, ``step:72h:0.5``, ``reset:30d``, ``slurm:half-life=…``),
    ``usage`` what a job is charged per second (``cpu``, ``maui-pe``, ``pe``,
    ``pe-additive``, ``dominant``, ``tres:W+W+…``, ``billing``). ``swf_cpus`` and ``swf_memory``
    pick an SWF log's fields as in ``read()``. ``cluster`` names the cluster whose associations
    count when ``shares`` is a ``sacctmgr`` output that lists several (``scontrol show
    config``'s ``ClusterName``)."""
    if policy is not None:
        warnings.warn(
            "priorities(policy=...) is now priorities(function=...): it names a fairshare "
            "function, not a policy as replay's policies do",
            DeprecationWarning,
            stacklevel=2,
        )
        function = policy
    return Standings(
        _native.priorities_run(
            _paths(traces),
            format=format,
            lenient=lenient,
            swf_cpus=swf_cpus,
            swf_memory=swf_memory,
            shares=_path(shares),
            at=None if at is None else str(at),
            policy=function,
            decay=decay,
            usage=usage,
            machines=_path(machines),
            cluster=cluster,
        )
    )


def penalty(
    machines: Path,
    *,
    cpus: float = 1.0,
    mem: Union[str, float] = "0",
    gpus: float = 0.0,
    scratch: Union[str, float] = "0",
    nodes: int = 1,
    exclusive: bool = False,
    properties: Iterable[str] = (),
    walltime: Union[str, int] = "1h",
    queue_cost: float = 1.0,
    spec: Optional[float] = None,
    mode: str = "max",
) -> Document:
    """What one job is charged on each machine of a catalogue (MetaCentrum's Processor
    Equivalent, machine by machine), as ``fairshare penalty`` explains it. ``mem`` and
    ``scratch`` are sizes (``"16G"``, bytes), ``walltime`` a duration."""
    return Document(
        _native.penalty_run(
            os.fspath(machines),
            cpus=cpus,
            mem=str(mem),
            gpus=gpus,
            scratch=str(scratch),
            nodes=nodes,
            exclusive=exclusive,
            properties=list(properties),
            walltime=str(walltime),
            queue_cost=queue_cost,
            spec=spec,
            mode=mode,
        )
    )


def simulate(
    scenario: Path,
    *,
    policy: Optional[str] = None,
    runs: Optional[int] = None,
    progress: Union[bool, Callback] = True,
) -> Document:
    """Runs a scenario as ``fairshare simulate`` does: processes cycling over resource queues
    (the bottleneck paper's simulator) or workloads under the runtime fairness service (the
    heaviness paper's), told apart by the file's tables. ``policy`` and ``runs`` override the
    file's."""
    bar = Bar("run", "simulate")
    try:
        native = _native.simulate_run(
            os.fspath(scenario), policy=policy, runs=runs, progress=callback(progress, bar)
        )
    finally:
        bar.close()
    return Document(native)


def sweep(
    traces: Union[Path, Sequence[Path]],
    *,
    fractions: Iterable[float] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    nines: Iterable[int] = (1, 2, 3, 4, 5, 6, 7),
    baseline: str = "drf",
    shard: tuple[int, int] = (0, 1),
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
    horizon: Union[str, int, None] = None,
    drain: bool = False,
    rule: str = "head-of-line",
    scheduler: str = "fill",
    overrun: str = "kill",
    progress: Union[bool, Callback] = True,
) -> Sweep:
    """The SDRF paper's grid, as ``fairshare sweep`` runs it: SDRF with δ = 1 − 10⁻ᵏ for each k
    of ``nines``, and ``baseline``, at each capacity fraction of the trace's mean demand R;
    ``shard=(i, n)`` runs cell j only when j mod n = i. The trace options (``format``,
    ``lenient``, ``swf_cpus``, ``swf_memory``) are ``read()``'s and the cluster options
    (``horizon``, ``drain``, ``rule``, ``scheduler``, ``overrun``) ``replay()``'s."""
    bar = Bar("cell", "sweep")
    try:
        native = _native.sweep_run(
            _paths(traces),
            fractions=list(fractions),
            nines=list(nines),
            baseline=baseline,
            shard=tuple(shard),
            format=format,
            lenient=lenient,
            swf_cpus=swf_cpus,
            swf_memory=swf_memory,
            horizon=None if horizon is None else str(horizon),
            drain=drain,
            rule=rule,
            scheduler=scheduler,
            overrun=overrun,
            progress=callback(progress, bar),
        )
    finally:
        bar.close()
    return Sweep(native)


def baa_timeline(timeline: Path) -> BaaTimeline:
    """A timeline of joins, departures and demand caps (TOML, see examples/baa/) run epoch by
    epoch under BAA or BAA-T, as ``fairshare baa timeline`` does."""
    return BaaTimeline(_native.baa_timeline_run(os.fspath(timeline)))

