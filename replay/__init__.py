"""Replay: an asyncio engine that plays a scenario against a server with per-client network and
browser emulation, records every request and watches its own lag.

Shaped like httperf: the core (``scheduler``, ``browser``, ``http``, ``emulation``) emits events
(``events.Hooks``); ``record`` subscribes to them; ``runner`` wires a run together."""
from .runner import ReplayError, ReplayOptions, exit_status, replay

__all__ = ["replay", "ReplayOptions", "ReplayError", "exit_status"]
