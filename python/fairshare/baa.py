"""Bottleneck-aware allocation over time (BAA and BAA-T), as ``fairshare baa`` runs it."""

from ._documents import BaaTimeline
from ._documents import baa_timeline as timeline

__all__ = ["BaaTimeline", "timeline"]
