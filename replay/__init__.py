"""Replay: an asyncio engine that plays a scenario against a server with per-client network and
browser emulation, records every request and watches its own lag.

Shaped like httperf: the core (``scheduler``, ``browser``, ``http``, ``emulation``) emits events
(``events.Hooks``); ``record`` subscribes to them; ``runner`` wires a run together. The
runner's names are imported on first use, so that ``replay.walltime`` (what ``wagon synth``
prints) comes without the engine."""
from __future__ import annotations

import importlib

__all__ = ["replay", "ReplayOptions", "ReplayError", "exit_status"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".runner", __name__), name)
