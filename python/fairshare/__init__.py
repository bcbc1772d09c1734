"""fairshare from Python: multi-resource fair sharing on the same library as the ``fairshare``
command, with the same names, defaults and numbers.

>>> import fairshare
>>> [p["name"] for p in fairshare.policies()][:3]
['fifo', 'drf', 'weighted-drf']
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Union

from . import baa
from ._documents import Document, Standings, Sweep, penalty, priorities, simulate, sweep
from ._native import InputError, allocate_json, policies_json
from ._reader import Trace, read
from ._replay import Result, replay

# Where the input went wrong, when a reader knows: set on errors from the library, None on
# the others.
InputError.file = None
InputError.line = None
InputError.field = None

__all__ = [
    "Document",
    "InputError",
    "Result",
    "Standings",
    "Sweep",
    "Trace",
    "allocate",
    "baa",
    "penalty",
    "policies",
    "priorities",
    "read",
    "replay",
    "simulate",
    "sweep",
]


def policies() -> list[dict[str, Any]]:
    """Every policy of fairshare's registry: ``name``, ``aliases``, ``about``, ``params``
    (each with ``key``, ``value`` and ``about``) and ``engines`` (the commands that run it:
    ``allocate``, ``replay``, ``simulate``)."""
    return json.loads(policies_json())


def allocate(
    instance: Union[Mapping[str, Any], str, os.PathLike],
    rule: str = "head-of-line",
) -> dict[str, Any]:
    """What a policy gives each user of an instance, as ``fairshare allocate --json`` prints it.

    ``instance`` is an instance as a dict (the layout of docs/json.md's instance files) or the
    path of an instance file; ``rule`` is what a task that does not fit does in task mode
    (``head-of-line``, the paper's rule, or ``skip``). Raises ``InputError`` for an instance
    fairshare cannot use, saying where and what was expected."""
    if isinstance(instance, Mapping):
        text = json.dumps(instance)
    else:
        path = os.fspath(instance)
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError as error:
            raise _in_file(InputError(f"{path}: cannot read it: {error.strerror}"), path) from error
        try:
            return json.loads(allocate_json(text, rule))
        except InputError as error:
            raise _in_file(InputError(f"{path}: {error}"), path) from None
    return json.loads(allocate_json(text, rule))


def _in_file(error: InputError, path: str) -> InputError:
    """`error`, saying that it is in the file `path`."""
    error.file = path
    return error
