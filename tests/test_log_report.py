"""``wagon report LOG`` (issue 38): the panel's numbers against the log read by the test's own
regular expression and pandas, its dates against the log's own timestamps, its units as people
read them, and, in headless Chromium, a page that renders and whose tables sort on a click."""
from __future__ import annotations

import gzip
import html
import re
import subprocess

import pandas as pd
import pytest
from click.testing import CliRunner

from wagon.cli import main

from .conftest import require_tool
from .test_report import FLAGS

#: a combined-format line: address, time and zone, request, status, bytes, referrer, agent
LINE = re.compile(rb'^(\S+) \S+ \S+ \[([0-3]\d)/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
                  rb'/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-]\d{4})\] "(?:GET|HEAD|POST) (\S+) '
                  rb'HTTP/1\.[01]" (\d{3}) (\d+|-)(?: "([^"]*)" "([^"]*)")?$')
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _log(lines: list[bytes]) -> pd.DataFrame:
    """The log's requests as the test reads them: a row per line the pattern matches."""
    rows = [m.groups() for m in map(LINE.match, lines) if m]
    df = pd.DataFrame(rows, columns=["ip", "d", "mon", "y", "H", "M", "S", "zone", "url",
                                     "status", "bytes", "ref", "agent"])
    df = df.map(lambda v: v.decode() if isinstance(v, bytes) else "")
    month = df["mon"].map(lambda m: f"{MONTHS.index(m) + 1:02d}")
    df["local"] = pd.to_datetime(df["y"] + "-" + month + "-" + df["d"] + " " + df["H"] + ":"
                                 + df["M"] + ":" + df["S"])
    df["bytes"] = pd.to_numeric(df["bytes"].replace("-", "0"))
    df["status"] = df["status"].astype(int)
    return df


def _cells(text: str, ident: str) -> list[list[tuple[str, str | None]]]:
    """The table ``ident``'s rows: (shown text, data-v or None) per cell."""
    body = re.search(rf"<table id='{ident}'[^>]*>(.*?)</table>", text, re.S).group(1)
    return [[(html.unescape(t), v) for v, t in
             re.findall(r"<td(?: data-v='([^']*)'| class='text')?>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1])]


@pytest.fixture(scope="module")
def sample_page(sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("log") / "log.html"
    r = CliRunner().invoke(main, ["report", str(sample), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out, _log(gzip.open(sample).read().splitlines())


def test_the_panel_counts_what_the_log_holds(sample_page, sample):
    page, log = sample_page
    text = page.read_text()
    lines = gzip.open(sample).read().splitlines()
    statuses = {int(v): int(n) for (_, v), (_, n), *_ in _cells(text, "statuses")}
    assert statuses == log["status"].value_counts().to_dict()
    totals = {k: v for (k, _), v in _cells(text, "totals")}
    assert int(totals["requests"][1]) == len(log)
    assert int(totals["bytes sent"][1]) == log["bytes"].sum()
    mb = float(totals["bytes sent"][0].removesuffix(" MB"))       # 143 MB, not 143046381
    assert mb == pytest.approx(log["bytes"].sum() / 1e6, rel=5e-3)
    assert totals["requests"][0] == f"{len(log):,}"
    refs = log.loc[~log["ref"].isin(["", "-"]), "ref"].value_counts()
    shown = {ref: int(n) for (ref, _), (_, n), *_ in _cells(text, "referrers")}
    assert shown == refs.head(len(shown)).to_dict() and len(shown) == 20
    hours = log.groupby(log["local"].dt.floor("h")).apply(
        lambda g: (len(g), len(g.groupby(["ip", "agent"]))))
    assert [(t, int(n), int(v)) for (t, _), (_, n), _, (_, v), _ in _cells(text, "per-hour")] == [
        (f"{h:%Y-%m-%d %H}:00", n, v) for h, (n, v) in hours.items()]
    robots = log.loc[log["url"] == "/robots.txt", "ip"].unique()
    assert int(totals["robot requests"][1]) == log["ip"].isin(robots).sum() > 0
    agents = log.loc[log["ip"].isin(robots), "agent"].value_counts()
    assert {a: int(n) for (a, _), (_, n), *_ in _cells(text, "robots")} == agents.to_dict()
    # the lines read, and those the test's pattern refuses as the malformed ones, each listed
    assert int(totals["lines read"][1]) == len(lines)
    bad = [i + 1 for i, line in enumerate(lines) if not LINE.match(line)]
    assert int(totals["malformed lines"][1]) == len(bad) > 0
    listed = [int(t.rsplit(":", 1)[1]) for (t, _), *_ in _cells(text, "malformed-lines")]
    assert listed == bad
    # the most requested URLs with their requests and bytes, the log's largest counts
    urls = log.groupby("url").agg(n=("url", "size"), b=("bytes", "sum"))
    top = {u: (int(n), int(b)) for (u, _), _, (_, n), _, _, (_, b) in _cells(text, "top-urls")}
    assert len(top) == 20 and all(top[u] == tuple(urls.loc[u]) for u in top)
    assert min(n for n, _ in top.values()) >= urls.drop(index=list(top))["n"].max()


def test_dates_are_the_logs_own(sample_page, nasa, tmp_path):
    """First and last request as the log writes them (its offset, not UTC), for a log east of
    UTC (the sample, +0100) and one west of it (NASA, -0400)."""
    page, log = sample_page
    head = gzip.open(nasa).read().splitlines()[:3000]
    (tmp_path / "nasa.log").write_bytes(b"\n".join(head) + b"\n")
    r = CliRunner().invoke(main, ["report", str(tmp_path / "nasa.log"), "-o",
                                  str(tmp_path / "nasa.html")])
    assert r.exit_code == 0, r.output
    for text, df, zone in ((page.read_text(), log, "UTC+01:00"),
                           ((tmp_path / "nasa.html").read_text(), _log(head), "UTC−04:00")):
        totals = {k: t for (k, _), (t, _) in _cells(text, "totals")}
        assert totals["first request"] == f"{df['local'].min():%Y-%m-%d %H:%M:%S}"
        assert totals["last request"] == f"{df['local'].max():%Y-%m-%d %H:%M:%S}"
        assert totals["times in"] == zone
        days = [t for (t, _), *_ in _cells(text, "per-day")]
        assert days == sorted({f"{t:%Y-%m-%d}" for t in df["local"]})


def test_the_page_renders_and_a_click_sorts_a_table(sample_page, tmp_path):
    """Chromium loads the page, then a test script clicks the bytes header of the URL table
    once (largest first) and the referrers' requests header twice (smallest first)."""
    chromium = require_tool("chromium")
    page, _ = sample_page
    clicks = ("<script>const th = (t, k) => document.querySelectorAll(`#${t} th`)[k];"
              "th('top-urls', 5).click(); th('referrers', 1).click(); th('referrers', 1).click();"
              "</script></body>")
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page.read_text().replace("</body>", clicks))
    dom = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'chrome'}",
                          "--dump-dom", clicked.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-images="ok 0"' in body and "data-errors" not in body, body
    before = [int(r[5][1]) for r in _cells(page.read_text(), "top-urls")]
    after = [int(r[5][1]) for r in _cells(dom.replace('"', "'"), "top-urls")]
    assert after == sorted(before, reverse=True) != before
    refs = [int(r[1][1]) for r in _cells(dom.replace('"', "'"), "referrers")]
    assert refs == sorted(refs) and refs[0] < refs[-1]


def test_fit_is_only_for_logs(tmp_path):
    """--fit on a model is one line, exit 2, and writes nothing (the model is not read)."""
    (tmp_path / "m.json").write_text("{}")
    r = CliRunner().invoke(main, ["report", str(tmp_path / "m.json"), "--fit", "-o",
                                  str(tmp_path / "m.html")])
    assert r.exit_code == 2 and "--fit is for logs" in r.output
    assert not (tmp_path / "m.html").exists()
