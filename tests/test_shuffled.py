"""Logs whose stamps were shuffled inside a minute (wagon.logs.shuffled): found, said, and read
in the order the server wrote them — against the logs' own lines read here with a regex, a
shuffle made here, and the law of uniform seconds."""
from __future__ import annotations

import dataclasses
import gzip
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

import wagon
from wagon.logs.parse import ParseOptions, parse_piece
from wagon.logs.partition import partition_requests, shared_context
from wagon.logs.pieces import plan
from wagon.logs.shuffled import Shuffle, restamped

DATA = Path(__file__).parent / "data"
STAMP = re.compile(rb"\[(\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\]")
EPA_STAMP = re.compile(rb"\[(\d\d):(\d\d):(\d\d):(\d\d)\]")


def raw_stamps(data: bytes) -> np.ndarray:
    """Each line's stamp in seconds (CLF's since the epoch, EPA's since its month began),
    read with a regex and ``datetime`` (NaN where a line has none)."""
    out = []
    for line in data.splitlines():
        m, e = STAMP.search(line), EPA_STAMP.search(line)
        out.append(datetime.strptime(m.group(1).decode(), "%d/%b/%Y:%H:%M:%S %z").timestamp()
                   if m else np.dot([int(x) for x in e.groups()], [86400, 3600, 60, 1])
                   if e else np.nan)
    return np.array(out)


def shuffled_copy(data: bytes, seed: int) -> bytes:
    """``data`` with each line's second redrawn uniformly in its minute, lines in order."""
    rng = np.random.default_rng(seed)
    second = re.compile(rb":(\d\d) ([+-]\d{4})\]")
    return b"".join(second.sub(lambda m: b":%02d %s]" % (rng.integers(60), m.group(2)), line,
                               count=1) for line in data.splitlines(keepends=True))


def elastic() -> bytes:
    return gzip.decompress((DATA / "elastic-apache-may15.log.gz").read_bytes())


def back_in_a_minute(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stamps of ``data``'s lines, and for each two consecutive ones: in one minute?
    going back?"""
    t = raw_stamps(data)
    t = t[np.isfinite(t)]
    return t, np.floor(t[1:] / 60) == np.floor(t[:-1] / 60), np.diff(t) < 0


def test_elastics_stamps_are_found_shuffled_within_the_minute():
    data = elastic()
    t, same, back = back_in_a_minute(data)
    share = np.mean(back[same])
    # two independent uniform seconds of a minute: one goes back with (1 - 1/60) / 2
    expected = (1 - 1 / 60) / 2
    assert abs(share - expected) < 3 * np.sqrt(expected * (1 - expected) / same.sum())
    assert not np.any(back[~same])
    req, parsed = wagon.parse_logs([str(DATA / "elastic-apache-may15.log.gz")])
    (shuffle,) = parsed.shuffled.values()
    assert shuffle.unit == 60.0
    assert shuffle.share == pytest.approx(share, abs=2e-3)
    assert shuffle.mean_back == pytest.approx(-np.diff(t)[back & same].mean(), rel=0.01)
    assert any("shuffled within the minute" in line for line in parsed.summary_lines())
    # every line stays in its logged minute, and the lines are in the file's order
    stamped = np.full(int(req.line.max()) + 1, np.nan)
    stamped[req.line] = req.time
    logged = np.r_[np.nan, raw_stamps(data)]
    ok = np.isfinite(stamped) & np.isfinite(logged)
    assert np.array_equal(np.floor(stamped[ok] / 60), np.floor(logged[ok] / 60))
    assert np.all(np.diff(stamped[ok]) >= 0)
    # inside its minute a line's place is uniform, as the publisher's seconds were
    assert stats.kstest((stamped[ok] % 60) / 60, "uniform").pvalue > 0.001


@pytest.mark.parametrize("name", ["nasa-aug95-morning.log.gz", "epa-http-aug95-half.log.gz"])
def test_a_servers_clock_is_not_taken_for_a_shuffle(name):
    path = DATA / name
    t = raw_stamps(gzip.decompress(path.read_bytes()))
    assert np.isfinite(t).mean() > 0.99 and np.mean(np.diff(t[np.isfinite(t)]) < 0) < 0.01
    _, parsed = wagon.parse_logs([str(path)])
    assert parsed.shuffled == {}


def test_a_shuffled_log_is_read_in_its_servers_order(tmp_path):
    """NASA's morning with its seconds shuffled here: found, and its clicks come back as the
    unshuffled log's (pages before their objects), where read by its stamps they do not."""
    data = gzip.decompress((DATA / "nasa-aug95-morning.log.gz").read_bytes())
    plain, mixed = tmp_path / "nasa.log", tmp_path / "nasa-shuffled.log"
    plain.write_bytes(data)
    mixed.write_bytes(shuffled_copy(data, seed=5))
    truth = wagon.sessionize(wagon.parse_logs([str(plain)])[0]).counts
    req, parsed = wagon.parse_logs([str(mixed)])
    assert [s.unit for s in parsed.shuffled.values()] == [60.0]
    back = wagon.sessionize(req).counts
    share = lambda c: c["object_clicks"] / c["clicks"]          # noqa: E731
    assert abs(share(back) - share(truth)) < 0.01
    assert back["clicks"] == pytest.approx(truth["clicks"], rel=0.05)
    # the same lines read by their stamps alone: objects before their pages
    logged = np.r_[np.nan, raw_stamps(mixed.read_bytes())][req.line]
    by_stamp = dataclasses.replace(req, time=logged, resolution=1.0)
    by_stamp = by_stamp.take(np.argsort(logged, kind="stable"))
    assert share(wagon.sessionize(by_stamp).counts) > share(truth) + 0.1


def test_the_times_do_not_depend_on_how_the_log_is_cut(tmp_path):
    """Pieces of a few kB and three partitions of clients give each line the time one whole
    parse gives it (runs joined at the seams, every run's draws its own)."""
    path = tmp_path / "elastic.log"
    path.write_bytes(elastic())
    whole, _ = wagon.parse_logs([str(path)])
    by_line = dict(zip(whole.line.tolist(), whole.time.tolist()))
    pieces = plan([str(path)], piece_bytes=1 << 16)
    assert len(pieces) > 10
    results = [parse_piece(p, ParseOptions(), 3) for p in pieces]
    shared, parsed = shared_context(results)
    assert shared.shuffled[0].unit == 60.0 and shared.resolution == 0.0
    seen = 0
    for k in range(3):
        req, _ = partition_requests([r.chunks[k] for r in results], shared)
        assert np.array_equal(req.time, [by_line[n] for n in req.line.tolist()])
        seen += len(req)
    assert seen == len(whole)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.integers(0, 10 ** 6))
def test_restamped_lines_stay_in_their_cell_and_in_order(sizes, cell0):
    first = np.cumsum([1] + sizes[:-1])
    runs = np.c_[cell0 + np.arange(len(sizes)), first, first + np.array(sizes) - 1]
    line = np.arange(1, sum(sizes) + 1)
    cell = np.repeat(runs[:, 0], sizes)
    shuffle = Shuffle(60.0, 0.5, 20.0, 0.0, runs)
    t = restamped(cell * 60.0 + 30.0, line, 0, shuffle)
    assert np.array_equal(np.floor(t / 60), cell)
    assert np.all(np.diff(t) > 0)



def test_the_log_report_says_the_stamps_were_shuffled():
    """``wagon report``'s totals name the shuffle and the share going back counted above."""
    from wagon.report.logpanel import log_sections, read_log
    page = "".join(log_sections(read_log([str(DATA / "elastic-apache-may15.log.gz")])))
    assert "elastic-apache-may15.log.gz: stamps" in page
    _, same, back = back_in_a_minute(elastic())
    assert f"time stamps shuffled within the minute ({100 * np.mean(back[same]):.1f} %" in page
    page = "".join(log_sections(read_log([str(DATA / "nasa-aug95-morning.log.gz")])))
    assert "shuffled" not in page


def test_a_log_out_of_order_across_minutes_is_no_shuffle_and_keeps_no_runs():
    """NASA's morning sorted by client (a log merged host by host): its lines go back across
    minutes, so it is no shuffle of a minute or an hour, and no piece keeps a run a minute
    (as many as its lines)."""
    from wagon.logs.shuffled import decided, disorder
    data = gzip.decompress((DATA / "nasa-aug95-morning.log.gz").read_bytes())
    lines = sorted(data.splitlines(keepends=True), key=lambda x: x.split(b" ", 1)[0])
    t = raw_stamps(b"".join(lines))
    ok = np.isfinite(t)
    d = disorder(t[ok], np.flatnonzero(ok) + 1)
    assert np.all(d.counts[:, 4] > 0.1 * d.counts[:, 3])       # back across cells, often
    assert all(len(r) == 0 for r in d.runs) and decided(d) is None
