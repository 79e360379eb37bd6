"""Parquet results (issue 38): the same run's parts published as CSV and as Parquet read back
to the same typed frame, and the Parquet file as pyarrow itself reads it."""
from __future__ import annotations

import csv
import importlib.util

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from wagon import ResultsError, read_results
from wagon.analysis.workload import load_workload
from wagon.cli import main
from wagon.formats.results import PAGE_COLUMNS, REQUEST_COLUMNS, pages_path
from wagon.replay.parts import part_paths, publish
from tests.test_results_format import FAILED, NOT_STARTED, ROW, RUN

QUOTED = (5, "modem/http10x4", 0, '/q"uo,te/é.gif', "object", 3, 0, 0, "2.000000", "2.000000",
          "", "", "", "2.100000", "2.300000", 304, 0, "", 0, "GET")
PAGE = (3, "modem/http10x4", 7, "0.5", "0.51", "1.13", "2.0", "1.49", "1.2", 2, 0)
CUT = (4, "t1-dsl/http11", 0, "1.0", "1.0", "", "", "", "", 1, 1)


def _publish(results: str, rows=(ROW, FAILED, NOT_STARTED, QUOTED), pages=(PAGE, CUT)) -> None:
    """Two processes' part files (the second's last line cut by a kill), published."""
    for k, (req, pag) in enumerate(((rows[:2], pages[:1]), (rows[2:], pages[1:]))):
        for path, body in zip(part_paths(results, k), (req, pag)):
            with open(path, "w", newline="") as f:
                csv.writer(f).writerows(body)
                if k == 1:
                    f.write("9,cut-mid-line")
    publish(results, 2, {**RUN, "classes": ["modem/http10x4", "t1-dsl/http11"]})


def test_parquet_reads_back_as_the_csv_of_the_same_parts(tmp_path):
    _publish(str(tmp_path / "r.csv"))
    _publish(str(tmp_path / "r.parquet"))
    assert not list(tmp_path.glob("*.part*"))
    for csv_path, parquet_path in ((tmp_path / "r.csv", tmp_path / "r.parquet"),
                                   (tmp_path / "r.pages.csv", tmp_path / "r.pages.parquet")):
        want, got = read_results(csv_path), read_results(parquet_path)
        pd.testing.assert_frame_equal(got, want)
        assert got.attrs == want.attrs
    assert read_results(tmp_path / "r.parquet").attrs["run"]["classes"][1] == "t1-dsl/http11"


def test_pyarrow_reads_the_rows_written(tmp_path):
    """pyarrow, an independent reader, sees each row as written: typed, empty times null."""
    _publish(str(tmp_path / "r.parquet"))
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.column_names == list(REQUEST_COLUMNS)
    assert [str(f.type) for f in table.schema] == [
        {"int": "int64", "bool": "bool", "float": "double", "str": "string"}[t]
        for t in REQUEST_COLUMNS.values()]
    rows = table.to_pylist()
    assert [r["url"] for r in rows] == [ROW[3], FAILED[3], NOT_STARTED[3], QUOTED[3]]
    assert rows[0]["reused"] is True and rows[1]["reused"] is False
    assert rows[0]["first_byte"] == 1.13 and rows[1]["first_byte"] is None
    assert rows[2]["error"] == "not_started" and rows[0]["error"] == ""
    pages = pq.read_table(tmp_path / "r.pages.parquet")
    assert pages.column_names == list(PAGE_COLUMNS)
    assert pages["done"].to_pylist() == [2.0, None]


def test_consumers_take_the_parquet_path(tmp_path):
    """wagon compare/report read a workload from results: the same one from either file."""
    _publish(str(tmp_path / "r.csv"))
    _publish(str(tmp_path / "r.parquet"))
    a, b = load_workload(str(tmp_path / "r.csv")), load_workload(str(tmp_path / "r.parquet"))
    assert b.kind == "replay" and b.urls == a.urls
    assert (b.time == a.time).all() and (b.clicks == a.clicks).all()


@pytest.mark.parametrize("change, message", [
    (lambda t: t.set_column(15, "status", pa.array([200, 0, 0, 999])),
     r"r.parquet: row 4: status must be 0 \(none\) or in \[100, 599\] \(got 999\)"),
    (lambda t: t.drop_columns(["bytes"]), r"r.parquet: its columns have not the columns of"),
    (lambda t: t.drop_columns(["session"]), r"r.parquet: not wagon replay results \(its col"),
    (lambda t: t.set_column(0, "session", t["session"].cast("string")),
     r"r.parquet: column session is string, not int64"),
])
def test_a_damaged_parquet_file_is_one_line(tmp_path, change, message):
    path = str(tmp_path / "r.parquet")
    _publish(path)
    pq.write_table(change(pq.read_table(path)), path)
    with pytest.raises(ResultsError, match=message):
        read_results(path)


def test_not_parquet_is_one_line(tmp_path):
    (tmp_path / "r.parquet").write_text("session,class\n")
    with pytest.raises(ResultsError, match=r"r.parquet: not a Parquet file"):
        read_results(tmp_path / "r.parquet")


def test_parquet_without_pyarrow_is_refused_before_the_run(tmp_path, monkeypatch):
    """Without pyarrow, the replay stops at once, exit 2, one line (no scenario is read)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    out = CliRunner().invoke(main, ["replay", str(tmp_path / "absent.jsonl"), "--target",
                                    "http://127.0.0.1:9/", "--results",
                                    str(tmp_path / "x.parquet")])
    assert out.exit_code == 2
    [line] = out.output.strip().splitlines()
    assert line.endswith(f"{tmp_path / 'x.parquet'}: Parquet results need pyarrow (pip install "
                         "'wagon[parquet]'), or give a .csv file")
