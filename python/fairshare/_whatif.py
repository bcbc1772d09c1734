"""``fairshare.slurm_whatif``: a Slurm site's bundle (``fairshare slurm collect``) replayed under
the site's own fairshare and the policies in question, as ``fairshare slurm what-if`` does,
with how far the prediction can be trusted."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from functools import cached_property
from typing import Any, Callable, Iterable, Union

from . import _native
from ._frames import frame
from ._progress import Bar, callback
from ._replay import Path, Result


class WhatIf(Result):
    """A finished what-if. Its tables (``summary``, ``users``, ``jobs``, …) are a ``Result``'s,
    of the replay, the baseline first (``"as-slurm"``, or ``"as-adapter"`` for a site that runs
    the adapter); ``trust`` says how far the baseline agrees
    with what really happened, ``taken`` what was read from which file of the bundle and
    ``unmodelled`` what the model leaves out. ``whatif`` is the document ``fairshare slurm
    what-if --json`` writes (``json()`` its text, to the byte)."""

    def __init__(self, native: _native.WhatIfRun, jobs=None, folder=None) -> None:
        super().__init__(native, jobs, folder)
        self._whatif_json = native.whatif_json()
        self.whatif: dict[str, Any] = json.loads(self._whatif_json)
        """The document ``fairshare slurm what-if --json`` writes."""
        self.trust: dict[str, Any] = self.whatif["trust"]
        """The baseline against the record: ``contested_order`` (the fraction of contested
        pairs started in the real order), ``median_start_error_s``, ``p90_start_error_s``,
        ``jobs``, ``left_out``, ``users``."""
        self.taken: list[str] = self.whatif["taken"]
        """One sentence on each value taken from the bundle, naming its file."""
        self.unmodelled: list[str] = self.whatif["unmodelled"]
        """One sentence on each thing the model leaves out."""

    def json(self) -> str:
        """The document's JSON text, byte for byte what ``fairshare slurm what-if --json``
        writes."""
        return self._whatif_json

    def to_html(self, path: Path) -> None:
        """Writes the page ``fairshare slurm what-if --report`` writes."""
        with open(os.fspath(path), "w", encoding="utf-8") as file:
            file.write(self._native.html())

    def table(self) -> str:
        """The text ``fairshare slurm what-if`` prints."""
        return self._native.table()

    @cached_property
    def trust_users(self):
        """One row per user of the dump: its jobs compared, its mean wait as recorded and as
        the baseline predicts it, and whether they are within 10 % or 30 s."""
        return frame(
            self.trust["users"],
            {
                "user": "string",
                "jobs": "int64",
                "recorded_mean_wait_s": "float64",
                "predicted_mean_wait_s": "float64",
                "within": "bool",
            },
        )


def slurm_whatif(
    bundle: Path,
    policies: Union[str, Iterable[str]] = (),
    *,
    jobs: Union[bool, Path] = True,
    progress: Union[bool, Callable[[int, int], Any]] = True,
) -> WhatIf:
    """Predicts ``policies`` on a Slurm site's bundle, as ``fairshare slurm what-if`` does
    (same numbers): everything comes from the bundle's files (the machines and partitions,
    the QOS, billing, the weights, Slurm's half-life and calc period as Slurm reads them, the
    recomputations' phase, the window's opening, the limits, the nodes' events and the
    reservations), the run is drained, what the site ran is replayed first as the baseline
    (Slurm's own fairshare, ``"as-slurm"``, or, when the bundle holds ``adapter.toml``, the
    adapter's policy through its site factors, ``"as-adapter"``), and each policy as the Slurm
    adapter would apply it (its ``weight`` and ``interval_s`` from ``adapter.toml``, else the
    adapter's defaults). ``jobs`` streams every job's outcome to a CSV file whose ``job_id`` is Slurm's
    JobID (``True``: a temporary file removed with the result; a path to keep it; ``False``:
    none). ``progress`` shows a bar when tqdm is installed, or is a callable given the
    simulated seconds done since its last call and the total.

    Raises ``InputError`` for a bundle missing a file, naming it, or a file that cannot be
    used, saying where and what was expected."""
    if isinstance(policies, str):
        policies = [policies]
    folder = tempfile.TemporaryDirectory(prefix="fairshare-jobs-") if jobs is True else None
    table = os.path.join(folder.name, "jobs.csv") if folder else (None if jobs is False else os.fspath(jobs))
    bar = Bar("s", "simulated")
    try:
        native = _native.slurm_whatif_run(os.fspath(bundle), list(policies), jobs=table, progress=callback(progress, bar))
    finally:
        bar.close()
    result = WhatIf(native, table, folder)
    for warning in result.warnings:
        warnings.warn(warning, stacklevel=2)
    return result


__all__ = ["WhatIf", "slurm_whatif"]
