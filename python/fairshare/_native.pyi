"""The compiled part of the package: the library crates, taking and giving JSON text exactly as
the ``fairshare`` command's ``--json`` does. Use the functions of ``fairshare`` instead."""

from typing import Any, Callable, Optional

class InputError(ValueError):
    """An input fairshare cannot use: the message says where and what was expected."""

    file: Optional[str]
    """The file the error is in, when known."""
    line: Optional[int]
    """Its line, from 1, when a reader knows it."""
    field: Optional[str]
    """The field (number and name, e.g. ``"5 (allocated processors)"``) or CSV column, when known."""

def policies_json() -> str:
    """Every policy of the registry, as a JSON array."""

def allocate_json(text: str, rule: str = "head-of-line") -> str:
    """The allocation of an instance (its JSON text), as ``fairshare allocate --json`` prints
    it (without the final newline)."""

class Replayed:
    """A finished replay, as the library holds it."""

    def json(self) -> str:
        """The summary, as ``fairshare replay --json`` writes it (with the final newline)."""
    def html(self) -> str:
        """The HTML report ``fairshare replay --report`` writes."""
    def table(self) -> str:
        """The table ``fairshare replay`` prints."""
    def warnings(self) -> list[str]:
        """What the results warn of."""
    def notes(self) -> list[str]:
        """What the reader and the assembly decided, in words."""
    def stats(self) -> str:
        """Each run's wall-clock seconds and events, as ``--stats`` writes them (JSON)."""

class WhatIfRun:
    """A finished what-if, as the library holds it."""

    def whatif_json(self) -> str:
        """The document, as ``fairshare slurm what-if --json`` writes it."""
    def json(self) -> str:
        """The replay's summary within it, as ``fairshare replay --json`` would write it."""
    def html(self) -> str:
        """The page ``fairshare slurm what-if --report`` writes."""
    def table(self) -> str:
        """The text ``fairshare slurm what-if`` prints."""
    def warnings(self) -> list[str]:
        """What the replay's results warn of."""
    def notes(self) -> list[str]:
        """What was taken from the bundle, in words."""
    def stats(self) -> str:
        """Each run's wall-clock seconds and events, as ``--stats`` writes them (JSON)."""

def slurm_whatif_run(
    dir: str,
    policies: list[str],
    *,
    jobs: Optional[str] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> WhatIfRun: ...
def replay_run(
    traces: list[str],
    policies: list[Any],
    *,
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
    capacity_fraction: Optional[float] = None,
    capacity: Optional[str] = None,
    machines: Optional[str] = None,
    shares: str = "equal",
    queues: Optional[str] = None,
    horizon: Optional[str] = None,
    drain: bool = False,
    rule: str = "head-of-line",
    scheduler: str = "fill",
    placement: str | None = None,
    overrun: str = "kill",
    slurm_conf: Optional[str] = None,
    site_weight: Optional[int] = None,
    site_interval: Optional[str] = None,
    partitions: Optional[str] = None,
    qos: Optional[str] = None,
    max_tres: bool = False,
    slurmctld_log: Optional[str] = None,
    gantt: Optional[str] = None,
    jobs: Optional[str] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Replayed:
    """Replays the traces under the policies as ``fairshare replay`` does; ``gantt`` is a
    window ``START+LENGTH``, ``"day"`` for the middle day, or ``None``; ``jobs`` the file the
    per-job table is written to, or ``None``."""

class Document:
    """A command's result as it writes it."""

    def json(self) -> str:
        """The JSON the command writes with ``--json``, to the byte."""
    def table(self) -> str:
        """The table the command prints."""
    def html(self) -> Optional[str]:
        """The HTML report the command writes with ``--report``, if it has one."""

def priorities_run(
    traces: list[str],
    *,
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
    shares: Optional[str] = None,
    at: Optional[str] = None,
    policy: str = "fair-tree",
    decay: str = "half-life:7d",
    usage: str = "cpu",
    machines: Optional[str] = None,
    cluster: Optional[str] = None,
) -> Document:
    """``fairshare priorities``: each account's and user's fairshare standing at a moment."""

def penalty_run(
    machines: str,
    *,
    cpus: float = 1.0,
    mem: str = "0",
    gpus: float = 0.0,
    scratch: str = "0",
    nodes: int = 1,
    exclusive: bool = False,
    properties: list[str] = ...,
    walltime: str = "1h",
    queue_cost: float = 1.0,
    spec: Optional[float] = None,
    mode: str = "max",
) -> Document:
    """``fairshare penalty``: what one job is charged machine by machine."""

def simulate_run(
    scenario: str,
    *,
    policy: Optional[str] = None,
    runs: Optional[int] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Document:
    """``fairshare simulate``: a process or runtime scenario, with its report."""

def sweep_run(
    traces: list[str],
    *,
    fractions: list[float],
    nines: list[int],
    baseline: str = "drf",
    shard: tuple[int, int] = (0, 1),
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
    horizon: Optional[str] = None,
    drain: bool = False,
    rule: str = "head-of-line",
    scheduler: str = "fill",
    overrun: str = "kill",
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Document:
    """``fairshare sweep``: the SDRF paper's grid, or one shard of it."""

def baa_timeline_run(timeline: str) -> Document:
    """``fairshare baa timeline``: a timeline of joins, departures and caps, epoch by epoch."""

class TraceReader:
    """An open trace, read a chunk at a time."""

    def __init__(
        self,
        traces: list[str],
        *,
        format: Optional[str] = None,
        lenient: bool = False,
        swf_cpus: str = "auto",
        swf_memory: str = "auto",
    ) -> None: ...
    def resources(self) -> list[str]:
        """The resources, in the order of the demand columns."""
    def units(self) -> list[str]:
        """The unit of each resource."""
    def stats(self) -> str:
        """What has been read, yielded and skipped so far (JSON)."""
    def next_chunk(self, size: int) -> Optional[dict[str, list[Any]]]:
        """Up to ``size`` more tasks as columns, or ``None`` at the end."""
