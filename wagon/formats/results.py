"""Replay results: a CSV of every request, a CSV of every page, a JSON file about the run.

``r.csv`` (requests) and ``r.pages.csv`` (pages) are plain CSV with a header line, so
``pandas.read_csv`` opens them without options; times are seconds from the run's t0 on a
monotonic clock, ``class`` is the client class's name. ``r.run.json`` says what ran (target,
scenario, t0 as a wall-clock time, options) and, once the run ends, its summary.
``read_results`` is the typed reader every consumer uses; it refuses, in one line naming the
file, the line and the field, anything the format forbids (``results_check``: the layout, each
column's range, the order of times), and ``read_run`` a run file that breaks ``RUN_SCHEMA``
(``run_schema``). A replay writes rows to part files and publishes these files whole when it
ends (``replay/parts.py``).

Version 2 (issue 9): every request of the run has exactly one row (``error`` also says
``not_started``, ``in_flight``, ``skipped``), ``start`` is when the browser issued the request
(before its connect; version 1: when it was written), and the ``retried`` column says a request
was sent a second time. Version 1 files are read with ``retried`` false.

Version 3 (issue 13): the run file names the scenario's ``model`` (its name and digest, as the
scenario's header gives them) and its ``speedup``; older run files are read with ``model`` None.
Version 4: the summary counts ``open_connections`` per second (as the replay saw connections
open and close); older summaries lack it.
Version 5 (issue 29): ``tls_start``, when the TLS handshake of the connection a request opened
began (``connected`` − ``tls_start`` is the handshake; empty without TLS), and the summary's
``tls`` latency and handshake counts; older requests files are read with ``tls_start`` empty.
Version 6: the summary's ``window`` says which seconds of the run its figures measure
(``--warmup``, ``--cooldown``) and what it left out; ``measured`` picks the rows inside it.
Older summaries measured the whole run.
Version 7 (issue 36): ``request``, the request's number in its session (0, 1, 2, ... as the
browser issued or settled them: redirects and a page listing an object twice have numbers of
their own), so that (``session``, ``request``) is unique and a repeated row is refused; older
requests files are read with ``request`` −1 (unknown: their rows are not checked for repeats).
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import TextIO

from ..source import open_regular, read_document
from .atomic import atomic_write
from .results_parquet import is_parquet, parquet_frame
from .run_schema import RESULTS_FORMAT, RESULTS_VERSION, RUN_SCHEMA, check_json
from .strict_json import dumps

__all__ = ["REQUEST_COLUMNS", "PAGE_COLUMNS", "ResultsError", "ResultsWriter", "pages_path",
           "requests_path", "run_path", "write_run", "read_run", "read_results", "is_results_header", "measured",
           "checked_frame"]

#: column → type ("int", "bool", "float" seconds or "str"); empty floats mean "never happened"
REQUEST_COLUMNS = {
    "session": "int", "class": "str", "page": "int", "url": "str", "kind": "str", "conn": "int",
    "reused": "bool", "retried": "bool", "intended": "float", "start": "float",
    "connect_start": "float", "tls_start": "float", "connected": "float", "first_byte": "float", "last_byte": "float",
    "status": "int", "bytes": "int", "error": "str", "request": "int", "method": "str"}
#: version 7 of the requests file: no ``method`` (every request a GET); versions 5–6: no
#: ``request`` either; versions 2–4: no ``tls_start`` either; version 1: no ``retried`` either
REQUEST_COLUMNS_V7 = {k: v for k, v in REQUEST_COLUMNS.items() if k != "method"}
REQUEST_COLUMNS_V6 = {k: v for k, v in REQUEST_COLUMNS_V7.items() if k != "request"}
REQUEST_COLUMNS_V4 = {k: v for k, v in REQUEST_COLUMNS_V6.items() if k != "tls_start"}
REQUEST_COLUMNS_V1 = {k: v for k, v in REQUEST_COLUMNS_V4.items() if k != "retried"}
OLD_REQUEST_COLUMNS = (REQUEST_COLUMNS_V7, REQUEST_COLUMNS_V6, REQUEST_COLUMNS_V4,
                       REQUEST_COLUMNS_V1)
PAGE_COLUMNS = {
    "session": "int", "class": "str", "page": "int", "intended": "float", "start": "float",
    "html_first_byte": "float", "done": "float", "response_time": "float",
    "html_latency": "float", "objects": "int", "errors": "int"}


class ResultsError(ValueError):
    """A file that is not wagon replay results (one line, naming the file).

    Example:

    >>> try:
    ...     wagon.read_results("model.json")
    ... except wagon.ResultsError as e:
    ...     print(e)
    model.json: not wagon replay results (its first line is not the requests or pages header)
    """


def pages_path(results: str | os.PathLike) -> str:
    """The pages file of a requests file (``r.csv`` → ``r.pages.csv``)."""
    p = Path(results)
    return str(p.with_name(p.stem + ".pages" + (p.suffix or ".csv")))


def requests_path(pages: str | os.PathLike) -> str:
    """The requests file of a pages file (``r.pages.csv`` → ``r.csv``)."""
    p = Path(pages)
    return str(p.with_name(p.stem.removesuffix(".pages") + p.suffix))


def run_path(results: str | os.PathLike) -> str:
    """The run file of a requests file (``r.csv`` → ``r.run.json``)."""
    p = Path(results)
    return str(p.with_name(p.stem + ".run.json"))


class ResultsWriter:
    """Rows of one results file, buffered until ``flush``; the header line first unless
    ``header`` is false (a worker's part that is appended to the first one)."""

    def __init__(self, out: TextIO, columns: dict[str, str], header: bool = True) -> None:
        self.out, self.rows = out, []
        self.csv = csv.writer(out)
        if header:
            self.csv.writerow(columns)

    def add(self, row: tuple) -> None:
        self.rows.append(row)

    def flush(self) -> None:
        if self.rows:
            self.csv.writerows(self.rows)
            self.rows.clear()
        self.out.flush()


def write_run(results: str | os.PathLike, info: dict, path: str | os.PathLike | None = None
              ) -> None:
    """Write the run file of ``results`` (or at ``path``), atomically: readers never see half
    of it."""
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION, **info}
    with atomic_write(path or run_path(results)) as f:
        f.write(dumps(doc) + "\n")


def read_run(results: str | os.PathLike, path: str | os.PathLike | None = None
             ) -> dict | None:
    """The run file of ``results`` (or the one at ``path``), checked against ``RUN_SCHEMA``;
    None when there is none (an interrupted writer). ResultsError (one line naming the file
    and the field) for a damaged one."""
    path = Path(path or run_path(results))
    if not path.exists() and not path.is_symlink():
        return None
    try:
        doc = json.loads(read_document(path, ResultsError), parse_constant=_not_json)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ResultsError(f"{path}: not a wagon run file ({str(e).splitlines()[0]})") from None
    if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT:
        raise ResultsError(f"{path}: not a wagon run file ('format' is not {RESULTS_FORMAT!r})")
    why = check_json(doc, RUN_SCHEMA)
    if why:
        raise ResultsError(f"{path}: not a valid wagon run file: {why}")
    doc.setdefault("model", None)                  # versions 1 and 2 did not record it
    return doc


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON")


def is_results_header(line: str) -> bool:
    """Is this the first line of a requests or pages results file?"""
    return line.strip() in {",".join(c) for c in (REQUEST_COLUMNS, *OLD_REQUEST_COLUMNS,
                                                   PAGE_COLUMNS)}


def read_results(path: str | os.PathLike):
    """A requests or pages results file as a typed ``pandas.DataFrame`` (``attrs["run"]``: the
    run file's content, or None). ResultsError (one line) for anything else.

    Example:

    >>> req = wagon.read_results("results.csv")              # wagon replay --results
    >>> summary = req.attrs["run"]["summary"]
    >>> summary["requests"]["ok"] == len(req[req["error"] == ""])
    True
    >>> print(f'{(req["last_byte"] - req["start"]).max():.3f} s')  # doctest: +ELLIPSIS
    0.0... s
    """
    path = str(path)
    df, columns = _parquet(path) if is_parquet(path) else _csv(path)
    for c, t in columns.items():
        if t == "bool":
            df[c] = df[c].astype(bool)
    if columns is REQUEST_COLUMNS_V1:
        df.insert(list(REQUEST_COLUMNS).index("retried"), "retried", False)
    if columns in OLD_REQUEST_COLUMNS[2:]:
        df.insert(list(REQUEST_COLUMNS).index("tls_start"), "tls_start", float("nan"))
    if columns in OLD_REQUEST_COLUMNS[1:]:
        df["request"] = -1                          # unknown before version 7
    if columns in OLD_REQUEST_COLUMNS:
        df["method"] = "GET"                        # every request was a GET before version 8
        df["method"] = df["method"].astype("string")
    from .results_check import check_run  # lazy: NumPy, as pandas
    pages = columns is PAGE_COLUMNS
    run = read_run(requests_path(path) if pages else path)
    problem = check_run(df, columns, run) if run is not None else None
    if problem is not None:
        row, field, what = problem
        raise ResultsError(f"{_where(path, row)}: {field} {what} "
                           f"(got {_cell(df[field].iloc[row])})")
    df.attrs["run"] = None if pages else run
    return df


def _csv(path: str) -> tuple["pandas.DataFrame", dict[str, str]]:
    """A CSV requests or pages file, typed and checked (``checked_frame``)."""
    with open_regular(path, ResultsError) as f:
        try:
            data = f.read(os.fstat(f.fileno()).st_size)     # as it was when opened
        except OSError as e:
            raise ResultsError(f"{path}: {e.strerror or e}") from None
    return checked_frame(path, data)


def _parquet(path: str) -> tuple["pandas.DataFrame", dict[str, str]]:
    """A Parquet requests or pages file, typed as ``_csv`` types the CSV (``results_parquet``)
    and checked by the same rules (``check_rows``)."""
    from .results_check import check_rows  # lazy: NumPy, as pandas
    with open_regular(path, ResultsError):
        pass                                        # a missing file, a directory: one line
    try:
        df, columns = parquet_frame(path, _columns)
    except ResultsError:
        raise
    except ValueError as e:
        raise ResultsError(str(e)) from None
    problem = check_rows(df, columns)
    if problem is not None:
        row, field, what = problem
        raise ResultsError(f"{_where(path, row)}: {field} {what} "
                           f"(got {_cell(df[field].iloc[row])})")
    return df, columns


def _where(path: str, row: int) -> str:
    """Where row ``row`` (0: the first) of a results file is: its CSV line, its Parquet row."""
    return f"{path}: row {row + 1}" if is_parquet(path) else f"{path}:{row + 2}"


def checked_frame(path: str, data: bytes, first_line: int = 2, say: str = "{}"
                  ) -> tuple["pandas.DataFrame", dict[str, str]]:
    """The bytes ``data`` of a requests or pages file (its header line first) typed, and its
    columns; ResultsError (one line: ``path``, the line, counting its first row as
    ``first_line``, and ``say`` holding the field and what is wrong) for anything the format
    forbids. ``read_results`` reads files with it, ``replay.salvage`` part files (rows without
    the header)."""
    # lazy: the replay engine writes results and must not pay for pandas at start-up
    import pandas as pd  # lazy: see above

    from .results_check import (check_layout, check_rows,  # lazy: NumPy, as pandas
                                fields_per_line, too_many)
    start = data.find(b"\n") + 1 or len(data)
    columns = _columns(path, _header(data[:start]))
    lines = data.count(b"\n", start)
    problem = check_layout(data, start, lines, len(columns))
    if problem is None:
        kinds = {"int": "int64", "bool": "int64", "float": "float64", "str": "string"}
        try:
            df = pd.read_csv(io.BytesIO(data), dtype={c: kinds[t] for c, t in columns.items()},
                             keep_default_na=False, skip_blank_lines=False,
                             na_values={c: [""] for c, t in columns.items() if t == "float"})
        except (ValueError, OverflowError, pd.errors.ParserError) as e:
            problem = (too_many(str(e)) or fields_per_line(data[start:], len(columns))
                       or _first_unreadable(data[start:], columns))
        else:
            # a first row with more fields than the header became the index (pandas' rule);
            # a stray carriage return ended a line for the parser
            problem = (check_rows(df, columns) if isinstance(df.index, pd.RangeIndex)
                       and len(df) == lines else
                       fields_per_line(data[start:], len(columns)) or
                       (0, "", f"has more fields than the header's {len(columns)}"))
            if problem is not None and problem[1]:
                row, field, what = problem
                problem = row, field, f"{what} (got {_cell(df[field].iloc[row])})"
    if problem is not None:
        row, field, what = problem
        raise ResultsError(f"{path}:{row + first_line}: " + say.format(
            f"{field + ' ' if field else 'the line '}{what}"))
    return df, columns


def _header(head: bytes) -> list[str]:
    """The names on the CSV header line ``head`` (none when it is not CSV text)."""
    try:
        return next(csv.reader([head.decode().rstrip("\r\n")]), [])
    except (UnicodeDecodeError, csv.Error):
        return []


def _columns(path: str, first: list[str]) -> dict[str, str]:
    """The columns a header (``first``: its names in order) names; ResultsError for any other
    (a results header with a column twice, missing or unknown is named as such)."""
    for c in (REQUEST_COLUMNS, *OLD_REQUEST_COLUMNS, PAGE_COLUMNS):
        if first == list(c):
            return c
    if first[:3] != ["session", "class", "page"]:
        raise ResultsError(f"{path}: not wagon replay results (" + (
            "its columns are not the requests or pages columns)" if is_parquet(path) else
            "its first line is not the requests or pages header)"))
    twice = sorted({c for c in first if first.count(c) > 1})
    known = set(REQUEST_COLUMNS) | set(PAGE_COLUMNS)
    why = (f"column {twice[0]!r} twice" if twice else
           f"unknown column {next((c for c in first if c not in known), '')!r}"
           if not set(first) <= known else "not the columns of a requests or pages file")
    raise ResultsError(f"{path}: its columns have {why}" if is_parquet(path) else
                       f"{path}:1: the header has {why}")


def _first_unreadable(body: bytes, columns: dict[str, str]) -> tuple[int, str, str]:
    """The first cell pandas could not type (the slow path, taken only for a bad file): every
    column read as text, then converted with ``errors='coerce'`` to find where."""
    import numpy as np  # lazy: see read_results
    import pandas as pd  # lazy: see read_results
    try:
        body.decode()
    except UnicodeDecodeError as e:
        return body.count(b"\n", 0, e.start), "", "is not UTF-8 text"
    try:
        text = pd.read_csv(io.BytesIO(body), header=None, names=list(columns), dtype=str,
                           keep_default_na=False, index_col=False, skip_blank_lines=False)
    except (ValueError, pd.errors.ParserError) as e:
        return 0, "", f"is not CSV ({str(e).splitlines()[0]})"
    problems = []
    for c, t in columns.items():
        if t == "str":
            continue
        v = text[c].str.strip()
        num = pd.to_numeric(v, errors="coerce")
        if t == "float":
            bad = num.isna() & (v != "")
            what = "must be a number of seconds or empty"
        else:
            bad = ~v.str.fullmatch(r"[+-]?[0-9]{1,18}")
            what = "must be an integer"
        rows = np.flatnonzero(bad.to_numpy())
        if len(rows):
            problems.append((int(rows[0]), c, f"{what} (got {_cell(text[c].iloc[rows[0]])})"))
    return min(problems, key=lambda p: p[0], default=(0, "", "is not a results row"))


def _cell(value) -> str:
    """A cell's value for an error message, cut short."""
    value = value.item() if hasattr(value, "item") else value       # NumPy's, as Python's
    text = "empty" if value is None or value != value or value == "" else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def measured(rows, run: dict | None):
    """A boolean Series: the rows (requests or pages, from ``read_results``) inside the measured
    window of the run's summary, placed as the replay places them — at ``start`` (their issue),
    else ``intended``, else the stop that settled them (the run's end). Every row for a run
    without a window (older results, no summary)."""
    window = ((run or {}).get("summary") or {}).get("window")
    if not window:
        return rows["session"].notna()                 # an int column: True on every row
    t = rows["start"].fillna(rows["intended"]).fillna(run["summary"]["duration_s"])
    inside = (t >= window["from_s"]) | (window["from_s"] == 0)     # sessions may start early
    return inside if window["to_s"] is None else inside & (t < window["to_s"])
