"""The rules of the requests and pages files, checked whole columns at a time.

A results file can hold millions of rows, so nothing here loops over rows in Python: the byte
layout (every line ends, every line has the header's number of fields) is checked on the raw
bytes (``bytes.count``, NumPy), and each column's range, the errors it may name and the order
of its times with pandas and NumPy on the typed columns. Each check returns the first problem
as ``(row, field, what)`` (row 0 is the first after the header), or None. (The run file's
rules: ``run_schema``.)
"""
from __future__ import annotations

import csv
import re

import numpy as np

from .limits import MAX_RUN_S, TIME_SLACK_S
from .site import METHODS, STATUS_ARG

__all__ = ["ERROR_KINDS", "EARLY_S", "MAX_BYTES", "check_layout", "too_many",
           "fields_per_line", "check_rows", "check_run"]

#: every outcome a request row may name ("" is a success)
ERROR_KINDS = ("http_4xx", "http_5xx", "refused", "connect_timeout", "connect_error",
               "too_many_open_files", "tls_error", "tls_verify", "no_h2", "reset", "closed",
               "truncated", "timeout", "request_timeout", "bad_response", "too_many_redirects",
               "skipped", "in_flight", "not_started",
               # a user's script (replay.script): a check, an extraction, the script itself
               "check_failed", "extract_failed", "script_error")
#: a timer may fire a millisecond before t0: times from this many seconds before it are kept
EARLY_S = 0.01
#: bytes of one response beyond which a count is absurd (1 TiB)
MAX_BYTES = 1 << 40
#: the ranges of integer columns, [low, high]
INT_RANGES = {"session": (0, None), "page": (0, None), "conn": (-1, None),
              "bytes": (0, MAX_BYTES), "objects": (0, None), "errors": (0, None),
              "reused": (0, 1), "retried": (0, 1), "request": (0, None)}
#: float columns that must be present on every row of the pages file
PAGE_REQUIRED = ("intended", "start")
#: durations (not times from t0): ≥ 0
DURATIONS = ("response_time", "html_latency")
#: pairs of times (a, b) that are in order, a ≤ b, when both are present; the last of each,
#: true for the order between first and last byte, holds only for a request that was settled
#: (one in flight at the stop ends then, before the first byte its emulated network was
#: still delivering)
ORDER = (("connect_start", "connected", False), ("first_byte", "last_byte", True),
         ("start", "last_byte", False), ("start", "done", False))
ROUNDING_S = 3e-6               # two times written with 6 decimals, and their difference


def check_layout(data: bytes, start: int, lines: int, fields: int
                 ) -> tuple[int, str, str] | None:
    """Every line of ``data`` from ``start`` (a results file after its header line; ``lines``
    line ends) ends with a newline and has ``fields`` fields. At C speed for a file without quotes: its commas number
    exactly ``fields`` − 1 per line (no line has more: the parser refuses those, see
    ``too_many``); otherwise each line is counted (``fields_per_line``). The caller checks that
    the parser saw one row per line (a stray carriage return would end a line for it)."""
    if start >= len(data):
        return None
    if not data.endswith(b"\n"):
        return lines, "", "is cut short (the file does not end with a line end)"
    if data.find(b'"', start) >= 0 or data.count(b",", start) != (fields - 1) * lines:
        return fields_per_line(data[start:], fields)
    return None


def too_many(message: str) -> tuple[int, str, str] | None:
    """The row and what is wrong, from the parser's message about a line with more fields."""
    got = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    return got and (int(got[2]) - 2, "", f"has {got[3]} fields, not the header's {got[1]}")


def fields_per_line(data: bytes, fields: int) -> tuple[int, str, str] | None:
    """The first line of ``data`` that does not have ``fields`` fields or holds a stray
    carriage return: commas counted per line with NumPy; the lines holding a quote (a URL with
    a comma or a quote) split by ``csv``."""
    raw = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(raw == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    commas = np.diff(np.searchsorted(np.flatnonzero(raw == 44), ends), prepend=0)
    quoted = np.zeros(len(ends), bool)
    quoted[np.searchsorted(ends, np.flatnonzero(raw == 34))] = True
    commas[starts == ends] = -1                     # an empty line has no field at all
    wrong = (commas != fields - 1) & ~quoted
    for row in np.flatnonzero(quoted):
        line = data[starts[row]:ends[row] + 1].decode("utf-8", "replace")
        try:
            wrong[row] = len(next(csv.reader([line]), [])) != fields
        except csv.Error:
            wrong[row] = True
    returns = np.flatnonzero(raw == 13)
    stray = returns[raw[returns + 1] != 10]         # the file ends with a newline: in bounds
    bad = np.flatnonzero(wrong)
    if len(stray) and (not len(bad) or np.searchsorted(ends, stray[0]) < bad[0]):
        return int(np.searchsorted(ends, stray[0])), "", "has a carriage return inside"
    if not len(bad):
        return None
    row = int(bad[0])
    got = max(int(commas[row]) + 1, 0) if not quoted[row] else "another number of"
    return row, "", f"has {got} fields, not the header's {fields}"


def check_rows(df, columns: dict[str, str]) -> tuple[int, str, str] | None:
    """The first row of the typed results ``df`` (columns ``columns``: name → type) that
    breaks a rule of the format (docs/formats.md, results files)."""
    problems = []

    def first(mask, field: str, what: str) -> None:
        bad = np.flatnonzero(np.asarray(mask, bool))
        if len(bad):
            problems.append((int(bad[0]), field, what))

    for c, t in columns.items():
        if t == "int" or t == "bool":
            lo, hi = INT_RANGES.get(c, (None, None))
            v = df[c].to_numpy()
            if lo is not None:
                first(v < lo, c, f"must be ≥ {lo}" if hi is None else f"must be in [{lo}, {hi}]")
            if hi is not None:
                first(v > hi, c, f"must be in [{lo}, {hi}]")
        elif t == "float":
            v = df[c].to_numpy()
            first(np.isinf(v), c, "must be a finite number of seconds")
            low = 0.0 if c in DURATIONS else -EARLY_S
            first(v < low, c, "must be ≥ 0 seconds" if c in DURATIONS else
                  "must not be before the run's t0")
            first(v > MAX_RUN_S, c, f"must be at most {MAX_RUN_S:g} seconds (a run's limit)")
        elif c != "error":
            first(df[c].isin(("",)), c, "must not be empty")
    if "status" in columns:
        s = df["status"].to_numpy()
        first((s != 0) & ((s < 100) | (s > 599)), "status", "must be 0 (none) or in [100, 599]")
        e = df["error"]
        first(~e.isin(("",) + ERROR_KINDS), "error", "is not an outcome wagon records")
        first(~df["kind"].isin(("page", "object")), "kind", "must be 'page' or 'object'")
        if "method" in df:
            first(~df["method"].isin(METHODS), "method", f"must be one of {', '.join(METHODS)}")
        for kind, lo in (("http_4xx", 400), ("http_5xx", 500)):
            first(e.isin((kind,)).to_numpy() & ((s < lo) | (s > lo + 99)), "status",
                  f"must be in [{lo}, {lo + 99}] for {kind}")
        first((df["connected"].notna() & df["connect_start"].isna()).to_numpy(), "connect_start",
              "must be present when connected is (a connection is begun before it is made)")
        ok = e.isin(("",)).to_numpy()
        first(ok & ((s < 100) | (s > 399)) & ~_asked(df, s), "status",
              "must be in [100, 399] for a success (or the status its URL asks for: "
              f"{STATUS_ARG}=)")
        first(ok & (df["start"].isna() | df["last_byte"].isna()).to_numpy(), "last_byte",
              "must be present for a success (and start)")
    else:
        for c in PAGE_REQUIRED:
            first(df[c].isna(), c, "must be present on every page")
        took = df["done"] - df["start"]
        first(took.isna() != df["response_time"].isna(), "response_time",
              "must be present exactly when done is")
        first((took - df["response_time"]).abs() > ROUNDING_S, "response_time",
              "must be done − start")
    if "status" not in columns:
        first(df.duplicated(["session", "page", "intended"]).to_numpy(), "page",
              "is a page its session already has at this intended time (a repeated row)")
    elif "request" in columns:
        first(df.duplicated(["session", "request"]).to_numpy(), "request",
              "is a request number its session already has (a repeated row)")
    for a, b, settled in ORDER:
        if a in columns and b in columns:
            wrong = (df[b] < df[a]).to_numpy()
            first(wrong & ~df["error"].isin(("in_flight",)).to_numpy() if settled else wrong, b,
                  f"must not be before {a}" + (" (unless in flight)" if settled else ""))
    return min(problems, key=lambda p: p[0], default=None)


def _asked(df, status: np.ndarray) -> np.ndarray:
    """Per row: does its URL ask a built site for its status (``formats.site.status_url``)?
    Such an answer is what the scenario asked for, a success."""
    out = np.zeros(len(status), bool)
    if "url" not in df:
        return out
    odd = np.flatnonzero((status >= 400) | ((status != 0) & (status < 100)))
    urls = df["url"].to_numpy()
    for i in odd:
        out[i] = re.search(rf"[?&]{STATUS_ARG}={status[i]}(&|$)", str(urls[i])) is not None
    return out


def check_run(df, columns: dict[str, str], run: dict) -> tuple[int, str, str] | None:
    """The first row of ``df`` that its run file ``run`` contradicts: a class the run did not
    have, a time after the run's recorded end (``duration_s`` + ``TIME_SLACK_S``)."""
    problems = []
    classes = run.get("classes")
    if classes:
        bad = np.flatnonzero(~df["class"].isin(classes).to_numpy())
        if len(bad):
            problems.append((int(bad[0]), "class", "is not a class of the run (its run file's "
                             "classes)"))
    end = (run.get("summary") or {}).get("duration_s")
    if end is not None:
        # a request the stop came before was due when it was planned, after the end maybe
        planned = df["error"].isin(("not_started",)).to_numpy() if "error" in df else False
        for c, t in columns.items():
            if t == "float" and c not in DURATIONS:
                late = (df[c] > end + TIME_SLACK_S).to_numpy()
                bad = np.flatnonzero(late & ~planned if c == "intended" else late)
                if len(bad):
                    problems.append((int(bad[0]), c, f"is after the run's end ({end:.3f} s, "
                                     "its run file's duration_s)"))
    return min(problems, key=lambda p: p[0], default=None)
