"""Progress bars for long work: a tqdm bar where tqdm is installed, told by the library from
the threads doing the work (every 1/200 of it), or the caller's own callable."""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

Callback = Callable[[int, int], Any]


class Bar:
    """A tqdm bar made at the first report, when the total is known; nothing when tqdm is not
    installed."""

    def __init__(self, unit: str, desc: str) -> None:
        self._unit, self._desc = unit, desc
        self._bar: Any = None

    def update(self, done: int, total: int) -> None:
        """`done` more units of `total` are done."""
        if self._bar is None:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                self._bar = False
                return
            self._bar = tqdm(total=total, unit=self._unit, unit_scale=True, desc=self._desc)
        if self._bar:
            self._bar.update(done)

    def close(self) -> None:
        """Closes the bar, if there is one."""
        if self._bar:
            self._bar.close()


def callback(progress: Union[bool, Callback], bar: Bar) -> Optional[Callback]:
    """What the library calls with (units done since the last call, total): `bar` for
    ``True``, nothing for ``False``, else the caller's callable."""
    if progress is True:
        return bar.update
    return progress or None
