"""fairshare from Python: multi-resource fair sharing on the same library as the ``fairshare``
command, with the same names, defaults and numbers.

>>> import fairshare
>>> [p["name"] for p in fairshare.policies()][:3]
['fifo', 'drf', 'weighted-drf']
"""

import json as _json
import os as _os
from importlib import metadata as _metadata
from typing import Any as _Any, Mapping as _Mapping, Union as _Union

try:
    from . import _native
except ImportError as _missing:
    from importlib.util import find_spec as _find_spec

    if _find_spec("fairshare._native") is not None:  # it is there but failed: say why
        raise
    raise ImportError(
        f"fairshare's compiled part (_native) is not in {_os.path.dirname(__file__)}: this is "
        "the package's source folder, not the installed package. Run from another folder, or "
        "build it in place with `maturin develop`."
    ) from _missing

from . import baa
from ._documents import Document, Standings, Sweep, penalty, priorities, simulate, sweep
from ._native import InputError
from ._native import allocate_json as _allocate_json
from ._native import policies_json as _policies_json
from ._ranker import Ranker
from ._reader import Trace, read
from ._replay import Result, replay
from ._whatif import WhatIf, slurm_whatif

try:
    __version__: str = _metadata.version("fairshare")
    """The installed package's version."""
except _metadata.PackageNotFoundError:  # built in place, never installed
    __version__ = "unknown"

# Where the input went wrong, when a reader knows: set on errors from the library, None on
# the others.
InputError.file = None
InputError.line = None
InputError.field = None

__all__ = [
    "__version__",
    "Document",
    "InputError",
    "Ranker",
    "Result",
    "Standings",
    "Sweep",
    "Trace",
    "WhatIf",
    "allocate",
    "baa",
    "penalty",
    "policies",
    "priorities",
    "read",
    "replay",
    "simulate",
    "slurm_whatif",
    "sweep",
]


def policies() -> list[dict[str, _Any]]:
    """Every policy of fairshare's registry: ``name``, ``aliases``, ``about``, ``params``
    (each with ``key``, ``value``, ``about`` and ``choices``: the lines of another registry
    it takes, such as the fairshare functions of ``function=``, else ``None``) and ``engines``
    (the commands that run it: ``allocate``, ``replay``, ``simulate``, and ``runtime`` for
    ``simulate``'s runtime scenarios)."""
    return _json.loads(_policies_json())


def allocate(
    instance: _Union[_Mapping[str, _Any], str, _os.PathLike],
    rule: str = "head-of-line",
) -> dict[str, _Any]:
    """What a policy gives each user of an instance, as ``fairshare allocate --json`` prints it.

    ``instance`` is an instance as a dict (the layout of docs/json.md's instance files) or the
    path of an instance file; ``rule`` is what a task that does not fit does in task mode
    (``head-of-line``, the paper's rule, or ``skip``). Raises ``InputError`` for an instance
    fairshare cannot use, saying where and what was expected."""
    if isinstance(instance, _Mapping):
        text = _json.dumps(instance)
    else:
        path = _os.fspath(instance)
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError as error:
            raise _in_file(InputError(f"{path}: cannot read it: {error.strerror}"), path) from error
        try:
            return _json.loads(_allocate_json(text, rule))
        except InputError as error:
            raise _in_file(InputError(f"{path}: {error}"), path) from None
    return _json.loads(_allocate_json(text, rule))


def _in_file(error: InputError, path: str) -> InputError:
    """`error`, saying that it is in the file `path`."""
    error.file = path
    return error
