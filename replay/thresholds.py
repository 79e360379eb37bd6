"""``--fail-on`` thresholds, in the style of k6: conditions on the summary that fail a run.

``errors>1%`` (the share of the requests that ended, in error or not, that ended in error: a
request the run's stop cut off did not end), ``errors>=10`` (a count), and
``NAME.STAT>MS`` for a latency of the summary (``request``, ``request_all``, ``connect``,
``first_byte``, ``transfer``, ``page``, ``intended``) or of the generator (``start_lag``,
``loop_lag``), STAT one of ``p50``, ``p90``, ``p99``, ``max``, in milliseconds. The operators are
``>``, ``>=``, ``<`` and ``<=``; the condition says when the run fails. A latency that was not
measured (no request succeeded) fails its threshold: a check that cannot be made does not pass.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

from .record import GENERATOR, LATENCIES

__all__ = ["Threshold", "ThresholdError", "parse_threshold", "check"]

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_SYNTAX = re.compile(r"^\s*([a-z_]+)(?:\.(p50|p90|p99|max))?\s*(>=|<=|>|<)\s*"
                     r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(%?)\s*$")


class ThresholdError(ValueError):
    """A threshold that cannot be read (one line)."""


@dataclass(frozen=True)
class Threshold:
    text: str
    metric: str           # "errors", or a latency or generator entry of the summary
    stat: str | None      # p50, p90, p99, max (latencies only)
    op: str
    value: float
    percent: bool

    def measure(self, summary: dict) -> float | None:
        """The summary's value this threshold is about (ms, a count or a percentage)."""
        if self.metric == "errors":
            n = summary["errors"]["total"]
            ended = summary["requests"]["ok"] + n
            return (100.0 * n / ended if ended else 0.0) if self.percent else float(n)
        group = summary["generator"] if self.metric in GENERATOR else summary["latency"]
        return group[self.metric][self.stat]

    def failed(self, summary: dict) -> bool:
        got = self.measure(summary)
        return got is None or _OPS[self.op](got, self.value)


def parse_threshold(text: str) -> Threshold:
    m = _SYNTAX.match(text)
    if m is None:
        raise ThresholdError(f"--fail-on {text!r}: write e.g. 'errors>1%' or 'request.p99>2000'")
    metric, stat, op, value, pct = m.groups()
    if metric == "errors":
        if stat is not None:
            raise ThresholdError(f"--fail-on {text!r}: 'errors' takes no statistic")
    elif metric in LATENCIES or metric in GENERATOR:
        if stat is None:
            raise ThresholdError(f"--fail-on {text!r}: say which statistic, e.g. {metric}.p99")
        if pct:
            raise ThresholdError(f"--fail-on {text!r}: latencies are in milliseconds, not %")
    else:
        names = ", ".join(("errors",) + LATENCIES + GENERATOR)
        raise ThresholdError(f"--fail-on {text!r}: unknown metric {metric!r} (use {names})")
    return Threshold(text.strip(), metric, stat, op, float(value), bool(pct))


def check(summary: dict, thresholds: list[Threshold]) -> list[dict]:
    """Each threshold, the value measured and whether the run fails it."""
    return [{"threshold": t.text, "value": t.measure(summary), "failed": t.failed(summary)}
            for t in thresholds]
