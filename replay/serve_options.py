"""What ``wagon serve`` can be told, apart from the server (aiohttp), so that its help is
written without it."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServeOptions"]


@dataclass(frozen=True)
class ServeOptions:
    """What ``wagon serve`` can be told (besides what to serve)."""

    host: str = "127.0.0.1"
    port: int = 8080
    max_connections: int | None = None
    backlog: int = 511                   # Apache's ListenBacklog default
    keepalive_timeout: float = 75.0
    header_timeout: float | None = 20.0  # Apache's RequestReadTimeout header=20
    service_time: float = 0.0
    max_time: float | None = None
    access_log: str | None = None
