"""The compiled part of the package: the library crates, taking and giving JSON text exactly as
the ``fairshare`` command's ``--json`` does. Use the functions of ``fairshare`` instead."""

from typing import Any, Callable, Optional

class InputError(ValueError):
    """An input fairshare cannot use: the message says where and what was expected."""

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

def replay_run(
    traces: list[str],
    policies: list[str],
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
    placement: str = "first",
    overrun: str = "kill",
    gantt: Optional[str] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Replayed:
    """Replays the traces under the policies as ``fairshare replay`` does; ``gantt`` is a
    window ``START+LENGTH``, ``"day"`` for the middle day, or ``None``."""
