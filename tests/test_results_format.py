"""The results format: what replay writes opens in pandas without options, ``read_results``
types it, and anything else is a one-line ResultsError."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon import ResultsError, read_results
from wagon.formats.results_check import check_run
from wagon.formats.results import (PAGE_COLUMNS, REQUEST_COLUMNS, REQUEST_COLUMNS_V1,
                                   REQUEST_COLUMNS_V4, REQUEST_COLUMNS_V6, REQUEST_COLUMNS_V7, ResultsWriter, pages_path, read_run, run_path, write_run)

ROW = (3, "modem/http10x4", 7, "/a b,c.html", "page", 12, 1, 1, "0.500000", "0.510000",
       "0.510000", "0.610000", "0.820000", "1.130000", "1.400000", 200, 4096, "", 0, "GET")
FAILED = (4, "t1-dsl/http11", 0, "/x", "object", -1, 0, 0, "1.000000", "1.000000", "1.000000",
          "", "", "", "1.020000", 0, 0, "refused", 0, "GET")
NOT_STARTED = (4, "t1-dsl/http11", 1, "/y", "page", -1, 0, 0, "", "", "", "", "", "", "", 0, 0,
               "not_started", 1, "POST")
TLS = list(REQUEST_COLUMNS).index("tls_start")
REQUEST_COLUMNS_INDEX = {c: k for k, c in enumerate(REQUEST_COLUMNS)}
#: what a run file says before its summary
RUN = {"scenario": "s.jsonl", "target": "http://127.0.0.1:1/", "t0": "2026-11-25T00:00:00+00:00",
       "t0_unix": 1.8e9, "classes": ["modem/http10x4"], "speedup": 1.0, "model": None,
       "options": {"target": "http://127.0.0.1:1/", "workers": 1, "fail_on": []},
       "summary": None}


def _write(path, rows, columns=REQUEST_COLUMNS):
    with open(path, "w", newline="") as f:
        w = ResultsWriter(f, columns)
        for r in rows:
            w.add(r)
        w.flush()
    return path


def test_plain_pandas_reads_results_without_options(tmp_path):
    path = _write(tmp_path / "r.csv", [ROW, FAILED])
    df = pd.read_csv(path)
    assert list(df.columns) == list(REQUEST_COLUMNS) and len(df) == 2
    assert df["class"].tolist() == ["modem/http10x4", "t1-dsl/http11"]
    assert df["url"][0] == "/a b,c.html"


def test_read_results_types_every_column(tmp_path):
    path = _write(tmp_path / "r.csv", [ROW, FAILED, NOT_STARTED])
    df = read_results(path)
    for column, kind in REQUEST_COLUMNS.items():
        want = {"int": "int64", "float": "float64", "str": "string", "bool": "bool"}[kind]
        assert str(df[column].dtype) == want, column
    assert df["error"].tolist() == ["", "refused", "not_started"]
    assert math.isnan(df["first_byte"][1]) and df["last_byte"][0] == pytest.approx(1.4)
    assert df[["start", "intended", "last_byte"]].iloc[2].isna().all()
    assert df["reused"].tolist() == [True, False, False]
    assert df["retried"].tolist() == [True, False, False]
    assert df.attrs["run"] is None                          # no run file beside it


def test_version_1_requests_files_are_read_without_retries(tmp_path):
    """Version 1 had no ``retried`` column: read as never retried, columns in today's order."""
    v1 = [r[:7] + r[8:TLS] + r[TLS + 1:-2] for r in (ROW, FAILED)]
    df = read_results(_write(tmp_path / "r1.csv", v1, REQUEST_COLUMNS_V1))
    assert list(df.columns) == list(REQUEST_COLUMNS)
    assert df["retried"].tolist() == [False, False] and df["reused"].tolist() == [True, False]
    assert str(df["retried"].dtype) == "bool" and df["status"].tolist() == [200, 0]


def test_version_4_requests_files_are_read_without_tls(tmp_path):
    """Versions 2–4 had no ``tls_start``: read as no handshake, columns in today's order."""
    v4 = [r[:TLS] + r[TLS + 1:-2] for r in (ROW, FAILED)]
    df = read_results(_write(tmp_path / "r4.csv", v4, REQUEST_COLUMNS_V4))
    assert list(df.columns) == list(REQUEST_COLUMNS) and df["tls_start"].isna().all()
    assert df["connected"][0] == pytest.approx(0.82) and df["retried"].tolist() == [True, False]


def test_version_6_requests_files_are_read_without_request_numbers(tmp_path):
    """Versions 5–6 had no ``request``: read as −1 (unknown), and a row twice is not refused
    (a page may list an object twice: no key to tell a repeat)."""
    df = read_results(_write(tmp_path / "r6.csv", [ROW[:-2], ROW[:-2]], REQUEST_COLUMNS_V6))
    assert list(df.columns) == list(REQUEST_COLUMNS) and df["request"].tolist() == [-1, -1]


def test_version_7_requests_files_are_read_as_gets_and_a_method_is_checked(tmp_path):
    """Version 7 had no ``method``: every request wagon sent then was a GET. A method wagon
    does not send is refused on its line."""
    df = read_results(_write(tmp_path / "r7.csv", [ROW[:-1], FAILED[:-1]], REQUEST_COLUMNS_V7))
    assert list(df.columns) == list(REQUEST_COLUMNS) and df["method"].tolist() == ["GET"] * 2
    assert str(df["method"].dtype) == "string"
    bad = _write(tmp_path / "bad.csv", [ROW, FAILED[:-1] + ("get",)])
    with pytest.raises(ResultsError, match=r"bad.csv:3: method must be one of GET, POST"):
        read_results(bad)


def test_a_request_number_twice_in_a_session_is_refused(tmp_path):
    """The same request number in two sessions is fine; twice in one session, the second row
    is named."""
    other = (ROW[0] + 1,) + ROW[1:]
    df = read_results(_write(tmp_path / "ok.csv", [ROW, other]))
    assert df["request"].tolist() == [0, 0]
    with pytest.raises(ResultsError, match=r"twice.csv:3: request is a request number its "
                                           r"session already has \(a repeated row\)"):
        read_results(_write(tmp_path / "twice.csv", [ROW, ROW]))


def test_pages_file_and_run_file(tmp_path):
    req = _write(tmp_path / "r.csv", [ROW])
    _write(pages_path(req), [(3, "modem/http10x4", 7, "0.5", "0.51", "1.13", "2.0", "1.49",
                              "1.2", 2, 0)], PAGE_COLUMNS)
    write_run(req, {**RUN, "options": {**RUN["options"], "x": float("nan")}})
    assert run_path(req).endswith("r.run.json") and pages_path(req).endswith("r.pages.csv")
    doc = json.loads(open(run_path(req)).read())            # strict JSON: NaN became null
    assert doc["format"] == "wagon-results" and doc["options"]["x"] is None
    assert read_results(req).attrs["run"]["target"] == "http://127.0.0.1:1/"
    pages = read_results(pages_path(req))
    assert list(pages.columns) == list(PAGE_COLUMNS) and pages["objects"].tolist() == [2]
    assert read_run(tmp_path / "elsewhere.csv") is None


@pytest.mark.parametrize("text, message", [
    ("a,b,c\n1,2,3\n", "not wagon replay results"),
    ("", "not wagon replay results"),
    (",".join(REQUEST_COLUMNS) + "\nx,y\n", ":2: the line has 2 fields, not the header's 20"),
    (",".join(REQUEST_COLUMNS) + "\n" + ",".join(["oops"] * len(REQUEST_COLUMNS)) + "\n",
     ":2: session must be an integer"),
])
def test_foreign_files_are_one_line_errors(tmp_path, text, message):
    p = tmp_path / "f.csv"
    p.write_text(text)
    with pytest.raises(ResultsError, match=message) as e:
        read_results(p)
    assert "\n" not in str(e.value) and "f.csv" in str(e.value)
    with pytest.raises(ResultsError, match="No such file"):
        read_results(tmp_path / "missing.csv")


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_read_results_raises_only_its_own_error(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("r") / "x.csv"
    p.write_bytes(data)
    try:
        read_results(p)
    except ResultsError as e:
        assert "\n" not in str(e)


def test_a_request_the_stop_came_before_may_be_due_after_the_end(tmp_path):
    """A page's objects paced after the stop (``--max-time``): their not_started rows keep the
    time they were due, after the run's end; any other row due then is refused."""
    late = list(NOT_STARTED)
    late[REQUEST_COLUMNS_INDEX["intended"]] = "34.876467"
    df = read_results(_write(tmp_path / "r.csv", [ROW, tuple(late)]))
    run = {"summary": {"duration_s": 4.0}}
    assert check_run(df, REQUEST_COLUMNS, run) is None
    df.loc[0, "intended"] = 34.9
    assert check_run(df, REQUEST_COLUMNS, run)[:2] == (0, "intended")
