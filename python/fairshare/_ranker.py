"""``fairshare.Ranker``: a policy written in Python, replayed through the same engine as the
registry's (``fairshare.replay(trace, policies=["drf", MyRanker()])``)."""

from __future__ import annotations

from typing import Sequence


class Ranker:
    """A policy of one's own: subclass it and define ``priority``; give an instance in
    ``replay``'s ``policies`` beside the registry's names. Any object with a ``priority``
    method of this signature will do; subclassing only documents it.

    ``priority(user, holdings, waiting_since, size)`` is asked for each user with work waiting,
    whenever what it holds or the job at the head of its queue changes: ``user`` is its name in
    the trace, ``holdings`` what it holds now as a fraction of the cluster's capacity of each
    resource (in the order of ``Result.doc["resources"]``), ``waiting_since`` when its head job
    was submitted (seconds, the trace's clock) and ``size`` that job's dominant share (its
    largest fraction of any resource). Return a number: **lower is served first**; equal
    priorities go to the user who appears first in the trace (the order of ``Result.users``),
    as the registry's policies break their ties, so a DRF written in Python
    (``return max(holdings)``) gives the registry's ``drf`` numbers to the byte. The Python
    rankers of one ``replay`` run one after another on one thread, beside the registry's
    policies, which run in parallel. The engine does not ask again just because time passed,
    so a priority should depend on these arguments and on what the object itself remembers
    (as DRF's does), not on the clock.

    ``name`` is how results, tables and ``Result.jobs`` name it (the class's name when not
    set); it must not be a registered policy's. An exception raised by ``priority``, or a value
    that is not a number, ends the replay and is raised from ``replay``.

    >>> class SmallestFirst(Ranker):
    ...     name = "smallest-first"
    ...     def priority(self, user, holdings, waiting_since, size):
    ...         return size
    """

    name: str

    def priority(
        self, user: str, holdings: Sequence[float], waiting_since: float, size: float
    ) -> float:
        """The user's priority now: lower is served first."""
        raise NotImplementedError(f"{type(self).__name__} must define priority()")
