"""``wagon serve``'s log of the requests it rejects: one line each, never a traceback.

aiohttp reports a request it cannot parse (a malformed request line or header, a
Content-Length beside Transfer-Encoding, a header over 8 KiB, TLS bytes on the plain port) by
logging "Error handling request" with the exception's traceback, and some of them (a bad method
first on a connection) only at debug level. The server's own logger, given to aiohttp, keeps
those records, every one, and writes each as a line: who sent it, the status and the parser's
reason. Its other debug chatter is dropped.
"""
from __future__ import annotations

import logging
from typing import TextIO

__all__ = ["rejection_logger"]

PREFIX = "wagon serve: rejected a request"


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        who = record.args[0] if isinstance(record.args, tuple) and record.args else None
        reason = str(getattr(exc, "message", "") or exc or type(exc).__name__).strip()
        reason = reason.splitlines()[0].rstrip(":") if reason else type(exc).__name__
        status = getattr(exc, "code", None) or getattr(exc, "status", None)
        return (f"{PREFIX}{f' from {who}' if who else ''}: "
                f"{f'{status} ' if status else ''}{reason}")


def _is_rejection(record: logging.LogRecord) -> bool:
    return record.exc_info is not None


def rejection_logger(stream: TextIO) -> logging.Logger:
    """The logger to give aiohttp's server (``logger=``): a line on ``stream`` per rejected
    request."""
    log = logging.getLogger("wagon.serve.rejected")
    log.propagate = False
    log.setLevel(logging.DEBUG)                   # the debug-level rejections too
    for h in list(log.handlers):
        log.removeHandler(h)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_OneLine())
    handler.addFilter(_is_rejection)
    log.addHandler(handler)
    return log
