"""``fairshare.read``: fairshare's trace readers on their own, streaming, so that a notebook can
read an SWF, Google, Alibaba or Slurm trace as fairshare reads it, chunk by chunk."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator, Optional, Sequence, Union

from . import _native
from ._frames import frame, pandas
from ._replay import Path, _paths

__all__ = ["Trace", "read"]


class Trace:
    """An open trace. Iterating gives DataFrames of up to ``chunk`` tasks each (columns in
    docs/python.md); ``records()`` gives one dict per task; ``frame()`` the whole trace as one
    DataFrame. Iterating reads on: iterate again and it goes on where it stopped; ``frame()``
    reads the whole trace afresh, wherever the iteration is."""

    def __init__(self, open_native: Callable[[], _native.TraceReader], chunk: int, shown: str) -> None:
        if chunk < 1:
            raise _native.InputError(f"chunk must be a positive number of tasks, found {chunk}")
        self._open = open_native
        self._native = open_native()
        self._chunk = chunk
        self._shown = shown
        self._started = False
        self.resources: list[str] = self._native.resources()
        """The trace's resources: one demand column each, in this order."""
        self.units: list[str] = self._native.units()
        """The unit of each resource."""

    @property
    def stats(self) -> dict[str, Any]:
        """What has been read so far: records read, tasks found and skipped (by reason), notes;
        the ``input`` of a replay's results once the trace is read to its end."""
        return json.loads(self._native.stats())

    def __repr__(self) -> str:
        resources = ", ".join(f"{r} ({u})" for r, u in zip(self.resources, self.units))
        found = self.stats.get("tasks_found", 0)
        return f"<fairshare.Trace {self._shown}: {resources}; {found} tasks read so far>"

    def chunks(self) -> Iterator[dict[str, list]]:
        """The tasks as columns (dicts of lists), ``chunk`` at a time, without pandas."""
        self._started = True
        while (columns := self._native.next_chunk(self._chunk)) is not None:
            yield columns

    def records(self) -> Iterator[dict[str, Any]]:
        """One dict per task, the DataFrames' columns as keys."""
        for columns in self.chunks():
            names = list(columns)
            yield from (dict(zip(names, values)) for values in zip(*columns.values()))

    def __iter__(self) -> Iterator[Any]:
        schema = self._schema()
        for columns in self.chunks():
            yield _table(columns, schema)

    def frame(self):
        """The whole trace as one DataFrame, read from its start (a trace already iterated is
        opened again; the iteration goes on where it stopped)."""
        whole = Trace(self._open, self._chunk, self._shown) if self._started else self
        parts = list(whole)
        return pandas().concat(parts, ignore_index=True) if parts else frame([], self._schema())

    def _schema(self) -> dict[str, str]:
        head = dict(list(TASKS.items())[:6])
        tail = dict(list(TASKS.items())[7:])
        return {**head, **{r: "float64" for r in self.resources}, **tail}


def _table(columns: dict[str, list], schema: dict[str, str]):
    """A DataFrame of columns of the schema's types."""
    return pandas().DataFrame(columns, columns=list(schema)).astype(schema)


TASKS = {
    "id": "uint64",
    "user": "string",
    "submit_s": "float64",
    "start_s": "float64",
    "runtime_s": "float64",
    "walltime_s": "float64",
    "<resource>": "float64",
    "queue": "string",
    "partition": "string",
    "nodes": "Int64",
    "exclusive": "bool",
    "properties": "object",
    "running": "bool",
    "cancelled_s": "float64",
}
"""The columns of a trace's DataFrames; ``<resource>`` stands for one column per resource."""


def read(
    traces: Union[Path, Sequence[Path]],
    *,
    chunk: int = 100_000,
    format: Optional[str] = None,
    lenient: bool = False,
    swf_cpus: str = "auto",
    swf_memory: str = "auto",
) -> Trace:
    """Opens a trace (or every part of one, read in order) with fairshare's readers, the tasks
    a replay would see, read ``chunk`` tasks at a time. Times are seconds on the trace's own
    clock; demands are in the trace's units (``Trace.units``). ``lenient`` skips malformed
    records and counts them (``Trace.stats``) instead of raising ``InputError`` at the
    first. ``swf_cpus`` picks an SWF log's processor count: ``"auto"`` (allocated when recorded, else
    requested), ``"allocated"`` or ``"requested"``; ``swf_memory`` its memory: ``"auto"``
    (requested when recorded, else used; jobs that record none are then left out, with a
    warning), ``"requested"``, ``"used"`` or ``"none"`` (no memory resource, every job kept)."""
    paths = _paths(traces)

    def open_native() -> _native.TraceReader:
        return _native.TraceReader(
            paths, format=format, lenient=lenient, swf_cpus=swf_cpus, swf_memory=swf_memory
        )

    return Trace(open_native, chunk, " ".join(paths))
