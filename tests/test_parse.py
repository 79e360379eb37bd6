"""Log parsing: every format, compressed inputs, merging, time zones, odd lines, real traces."""
from __future__ import annotations

import bz2
import gzip
import lzma
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wagon.logs.logformat import FormatError, compile_format, resolve_format
from wagon.logs.parse import LogError, parse_bytes, parse_logs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from baseline_parser import parse_file  # noqa: E402

CLF_LINES = [
    b'a.example - - [01/Aug/1995:00:00:01 -0400] "GET /index.html HTTP/1.0" 200 1839',
    b'b.example - frank [01/Aug/1995:00:00:07 +0200] "GET /img/a.gif HTTP/1.0" 304 -',
    b'a.example - - [01/Aug/1995:00:00:09 -0400] "POST /cgi-bin/form?mail=x@y.z HTTP/1.0" 200 12',
]


def test_common_log_format_fields():
    req, stats = parse_bytes(b"\n".join(CLF_LINES) + b"\n", "common")
    assert (stats.lines, stats.parsed, stats.malformed_total) == (3, 3, 0)
    first = datetime(1995, 8, 1, 0, 0, 1, tzinfo=timezone(timedelta(hours=-4))).timestamp()
    second = datetime(1995, 8, 1, 0, 0, 7, tzinfo=timezone(timedelta(hours=2))).timestamp()
    assert req.time.tolist() == [first, second, first + 8]
    assert [req.hosts[h] for h in req.host] == ["a.example", "b.example", "a.example"]
    assert [req.urls[u] for u in req.url] == ["/index.html", "/img/a.gif", "/cgi-bin/form"]
    assert [req.methods[m] for m in req.method] == ["GET", "GET", "POST"]
    assert req.status.tolist() == [200, 304, 200]
    assert req.size.tolist() == [1839, 0, 12]
    assert (req.agent == -1).all()


def test_query_strings_kept_only_on_request():
    req, _ = parse_bytes(CLF_LINES[2] + b"\n", "common", keep_query=True)
    assert req.urls[req.url[0]] == "/cgi-bin/form?mail=x@y.z"


def test_combined_format_has_agents():
    line = (b'h1 - - [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.1" 200 2326 '
            b'"http://example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"')
    req, stats = parse_bytes(line + b"\n")
    assert stats.formats["<bytes>"].startswith("combined")
    assert req.agents[req.agent[0]] == "Mozilla/4.08 [en] (Win98; I ;Nav)"
    assert req.time[0] == datetime(2000, 10, 10, 20, 55, 36, tzinfo=timezone.utc).timestamp()


def test_epa_format_and_base_month():
    line = b'port11.annex1.naples.net [30:00:00:02] "GET /icons/c.gif HTTP/1.0" 200 2624'
    req, stats = parse_bytes(line + b"\n", base_month="1995-08")
    assert stats.formats["<bytes>"].startswith("epa")
    assert req.time[0] == datetime(1995, 8, 30, 0, 0, 2, tzinfo=timezone.utc).timestamp()


def test_custom_logformat_with_duration_and_agent_first():
    fmt = '%{User-Agent}i|%a|%{%d/%b/%Y:%H:%M:%S %z}t|%r|%>s|%B|%D'
    line = b'curl/8.0|10.1.2.3|05/Mar/2024:10:00:00 +0000|GET /x?q=1 HTTP/1.1|404|0|1500'
    req, stats = parse_bytes(line + b"\n", fmt)
    assert stats.parsed == 1
    assert req.agents[req.agent[0]] == "curl/8.0"
    assert req.hosts[req.host[0]] == "10.1.2.3"
    assert req.duration[0] == pytest.approx(0.0015)
    assert req.status[0] == 404 and req.urls[req.url[0]] == "/x"


def test_epoch_time_and_seconds_duration():
    req, _ = parse_bytes(b'h [1700000000] "GET / HTTP/1.1" 200 5 3\n',
                         '%h [%{sec}t] "%r" %>s %b %T')
    assert req.time[0] == 1700000000 and req.duration[0] == 3.0


@pytest.mark.parametrize("spec, message", [
    ("%h%l %t \"%r\"", "nothing between"),
    ("%h \"%r\"", "no time field"),
    ("%h %{%Y}t \"%r\"", "time has no date"),
    ("%h %{%c}t \"%r\"", "%c is not supported"),
    ("%h %Q %t \"%r\"", "unknown directive"),
    ("%h %t", "no request line"),
])
def test_bad_formats_are_one_line_errors(spec, message):
    with pytest.raises(FormatError, match=message):
        compile_format(spec)


def test_unknown_named_format():
    with pytest.raises(FormatError, match="unknown format"):
        resolve_format("nginx-json")


def test_odd_lines_counted_by_reason_with_line_numbers():
    data = b"\n".join([
        CLF_LINES[0],
        b"",                                                              # empty
        b"garbage",                                                       # structure
        b'h - - [01/Aug/1995:0x:00:01 -0400] "GET / HTTP/1.0" 200 1',     # unreadable time
        b'h - - [01/Aug/1995:00:00:01 -0400] "GET" 200 1',                # no URL
        b'h - - [01/Aug/1995:00:00:01 -0400] "GET / HTTP/1.0" 2x0 1',     # status
        b'h - - [01/Aug/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1k',    # size
        CLF_LINES[1],
    ]) + b"\n"
    req, stats = parse_bytes(data, "common")
    assert stats.lines == 8 and stats.parsed == 2
    assert dict(stats.malformed) == {"empty line": 1, "does not match format": 1,
                                     "bad timestamp": 1, "bad request line": 1, "bad status": 1,
                                     "bad size": 1}
    assert [e[1] for e in stats.examples] == [2, 3, 4, 5, 6]   # first five kept, 1-based lines


def test_quote_inside_request_recovered_by_regex_fallback():
    line = b'h [30:09:36:04] "GET /gif/blue.gifalt=" HTTP/1.0" 404 -'
    req, stats = parse_bytes(line + b"\n", "epa")
    assert stats.parsed == 1
    assert req.urls[req.url[0]] == '/gif/blue.gifalt="'
    assert req.status[0] == 404


def test_crlf_and_missing_final_newline():
    req, stats = parse_bytes(CLF_LINES[0] + b"\r\n" + CLF_LINES[1], "common")
    assert stats.lines == 2 and stats.parsed == 2
    assert req.size.tolist() == [1839, 0]


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2"),
                                            (lzma.open, ".xz"), (open, ".log")])
def test_compressed_inputs(tmp_path, opener, suffix):
    path = tmp_path / f"access{suffix}"
    with opener(path, "wb") as f:
        f.write(b"\n".join(CLF_LINES) + b"\n")
    req, stats = parse_logs([str(path)])
    assert stats.parsed == 3


def test_several_files_merge_in_time_order(tmp_path):
    late = tmp_path / "late.log"
    early = tmp_path / "early.log"
    late.write_bytes(CLF_LINES[2] + b"\n")
    early.write_bytes(CLF_LINES[0] + b"\n" + CLF_LINES[1] + b"\n")
    req, stats = parse_logs([str(late), str(early)])
    assert stats.lines == 3
    assert np.all(np.diff(req.time) >= 0)
    assert req.file.tolist() == [1, 1, 0]


def test_unreadable_and_unparseable_inputs_are_log_errors(tmp_path):
    with pytest.raises(LogError, match="No such file"):
        parse_logs([str(tmp_path / "missing.log")])
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"hello\nworld\n")
    with pytest.raises(LogError, match="no line could be parsed"):
        parse_logs([str(junk)])


def test_vocabulary_shared_across_chunks(monkeypatch):
    from wagon.logs import parse as P
    monkeypatch.setattr(P, "CHUNK_BYTES", 100)
    data = b"\n".join(CLF_LINES * 20) + b"\n"
    req, stats = parse_bytes(data, "common")
    assert stats.parsed == 60
    assert len(req.hosts) == 2 and len(req.urls) == 3


# ---- real traces ------------------------------------------------------------------------------

def test_nasa_matches_the_plain_regex_parser_field_by_field(nasa):
    records, rejected = parse_file(str(nasa))
    req, stats = parse_logs([str(nasa)])
    assert rejected == 0 and stats.lines == 20_000 and stats.parsed == 20_000
    ours = list(zip((req.hosts[h] for h in req.host), req.time.tolist(),
                    (req.methods[m] for m in req.method), (req.urls[u] for u in req.url),
                    req.status.tolist(), req.size.tolist()))
    trimmed = [r[:3] + (r[3].strip(),) + r[4:] for r in records]   # targets are trimmed
    assert sum(r != t for r, t in zip(records, trimmed)) == 11     # ("/a.html  ", issue 26)
    assert ours == trimmed


def test_epa_odd_lines(epa):
    req, stats = parse_logs([str(epa)], base_month="1995-08")
    assert stats.lines == 15_754
    assert stats.parsed + stats.malformed_total == stats.lines
    assert dict(stats.malformed) == {"bad request line": 1}       # "GET  HTTP/1.0": empty URL
    assert stats.examples[0][1] == 4531
    assert req.time.min() == datetime(1995, 8, 30, tzinfo=timezone.utc).timestamp()
    assert (req.time.max() - req.time.min()) == pytest.approx(12 * 3600 - 1, abs=1)


# ---- properties -------------------------------------------------------------------------------

FORMATS = ["auto", "common", "combined", "epa", "vhost_combined", "nginx-main", "caddy",
           "nginx-json", "traefik", '%h [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %O %D']


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# 150 inputs a run, drawn anew each run (no example database): the search goes on run after run
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000), st.sampled_from(FORMATS))
@example(b"#Fields:", "auto")                  # W3C's header with no usable field list
@example(b"#Fields: date time\n#Fields:\n1 2\n", "auto")
def test_parser_never_raises_and_never_loses_a_line(data, fmt):
    req, stats = parse_bytes(data, fmt)
    assert stats.lines == _line_count(data)
    assert stats.parsed + stats.malformed_total + sum(stats.skipped.values()) == stats.lines
    assert len(req) == stats.parsed


LINE_PIECES = st.lists(st.sampled_from(
    [b" ", b'"', b"[", b"]", b"-", b"GET", b"/x", b"HTTP/1.0", b"200", b"12", b"\r",
     b"01/Aug/1995:00:00:01 -0400", b"30:00:00:00", b"\x00", b"\xff", b"?", b"\n", b"{", b"}",
     b'"ts":', b"1709632800.5", b":", b",", b"2024-03-05 10:00:00", b".123456",
     b"\xef\xbb\xbf"]), max_size=40)


@settings(max_examples=150, deadline=None)
@given(LINE_PIECES, st.sampled_from(FORMATS))
@example([b"{", b"}"], "caddy")                # a JSON record that is not an access record
def test_parser_survives_near_miss_lines(pieces, fmt):
    data = b"".join(pieces)
    req, stats = parse_bytes(data, fmt)
    assert (stats.parsed + stats.malformed_total + sum(stats.skipped.values()) == stats.lines ==
            _line_count(data))


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2099, 12, 30)),
       st.integers(min_value=-14 * 60, max_value=14 * 60))
def test_timestamps_match_datetime(when, zone_minutes):
    zone = timezone(timedelta(minutes=zone_minutes))
    when = when.replace(microsecond=0, tzinfo=zone)
    line = f'h - - [{when.strftime("%d/%b/%Y:%H:%M:%S %z")}] "GET / HTTP/1.0" 200 1\n'
    req, stats = parse_bytes(line.encode(), "common")
    assert stats.parsed == 1
    assert req.time[0] == when.timestamp()


STRFTIME = ["%d/%b/%Y:%H:%M:%S %z", "%Y-%m-%dT%H:%M:%S%z", "%a, %d %B %Y %I:%M:%S %p %z",
            "%Y%m%d %H%M%S %z", "%F %T %z"]


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2099, 12, 30)),
       st.integers(min_value=-14 * 60, max_value=14 * 60), st.sampled_from(STRFTIME),
       st.integers(min_value=0, max_value=999_999))
def test_strftime_times_match_datetime(when, zone_minutes, spec, micros):
    """Any strftime layout wagon reads gives the time Python's datetime gives."""
    zone = timezone(timedelta(minutes=zone_minutes))
    when = when.replace(microsecond=0, tzinfo=zone)
    line = f'h [{when.strftime(spec)}.{micros:06d}] "GET / HTTP/1.0" 200 1\n'
    req, stats = parse_bytes(line.encode(), f'%h [%{{{spec}}}t.%{{usec_frac}}t] "%r" %>s %b')
    assert stats.parsed == 1, stats.examples
    assert req.time[0] == pytest.approx(when.timestamp() + micros / 1e6, abs=1e-6)


# ---- the timestamps' resolution -------------------------------------------------------------

EPOCH0 = 1_709_632_800                      # 2024-03-05 10:00:00 UTC
#: layout → (how it writes a line, the most decimal places of a second it can write)
RESOLUTION_LAYOUTS = {
    '$remote_addr "$request" $status $msec': ('{host} "GET / HTTP/1.1" 200 {stamp}', 3),
    '%h [%{%d/%b/%Y:%H:%M:%S}t.%{usec_frac}t] "%r" %>s %b':
        ('{host} [{stamp}] "GET / HTTP/1.1" 200 1', 6),
    '%h %{msec}t "%r" %>s %b': ('{host} {stamp} "GET / HTTP/1.1" 200 1', 3),
    '$remote_addr [$time_iso8601] "$request" $status': ('{host} [{stamp}] "GET / HTTP/1.1" 200', 9),
    "caddy": ('{{"ts": {stamp}, "request": {{"remote_ip": "{host}", "method": "GET", '
              '"uri": "/"}}, "status": 200, "size": 1}}', 6),
}


def _stamp(layout: str, ticks: int, places: int) -> str:
    """A time ``ticks`` × 10^-places s after EPOCH0 as ``layout`` writes it."""
    whole, frac = divmod(ticks, 10 ** places)
    digits = f"{frac:0{places}d}" if places else ""
    when = datetime.fromtimestamp(EPOCH0 + whole, timezone.utc)
    if "usec_frac" in layout:
        return when.strftime("%d/%b/%Y:%H:%M:%S") + "." + (digits + "000000")[:6]
    if "%{msec}t" in layout:
        return str((EPOCH0 + whole) * 1000 + int((digits + "000")[:3]))
    if "$msec" in layout:                          # nginx writes it %T.%03M
        return f"{EPOCH0 + whole}." + (digits + "000")[:3]
    if "iso8601" in layout:
        return when.strftime("%Y-%m-%dT%H:%M:%S") + ("." + digits if places else "") + "+00:00"
    return f"{EPOCH0 + whole}" + ("." + digits if places else "")


def _resolution_log(layout: str, stamps: list[str]) -> bytes:
    row = RESOLUTION_LAYOUTS[layout][0]
    return "".join(row.format(host=f"192.0.2.{i % 9}", stamp=s) + "\n"
                   for i, s in enumerate(stamps)).encode()


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(RESOLUTION_LAYOUTS)), st.integers(0, 9),
       st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=30), st.data())
def test_the_detected_resolution_is_the_grid_written(layout, places, ticks, data):
    """Times written on a grid of 10^-p s, one of them needing all p places: the parser reports
    that grid (p ≤ 6; finer times are exact, 0.0), read from the digits, not from float64
    times that cannot hold microseconds at 1.7e9 s."""
    places = min(places, RESOLUTION_LAYOUTS[layout][1])
    scale = 10 ** places
    ticks = [t * scale + data.draw(st.integers(0, scale - 1)) for t in ticks]
    if places:
        ticks[0] = ticks[0] // 10 * 10 + data.draw(st.integers(1, 9))   # needs all p places
    req, stats = parse_bytes(_resolution_log(layout, [_stamp(layout, t, places)
                                                      for t in ticks]), layout)
    assert stats.parsed == len(ticks), stats.examples
    assert req.resolution == (10.0 ** -places if places <= 6 else 0.0)


def test_mixed_inputs_have_the_finest_resolution_and_empty_ones_none(tmp_path):
    """A log to the second and one to the millisecond: the millisecond grid holds both (decimal
    grids nest), whatever the order of the inputs; the pieces of one file agree."""
    seconds, millis = tmp_path / "s.log", tmp_path / "ms.log"
    seconds.write_bytes(_resolution_log('%h %{msec}t "%r" %>s %b',
                                        [str((EPOCH0 + i) * 1000) for i in range(50)]))
    millis.write_bytes(_resolution_log('%h %{msec}t "%r" %>s %b',
                                       [str(EPOCH0 * 1000 + 7 * i + 1) for i in range(50)]))
    fmt = '%h %{msec}t "%r" %>s %b'
    for paths in ([seconds, millis], [millis, seconds]):
        assert parse_logs([str(p) for p in paths], fmt)[0].resolution == 0.001
    assert parse_logs([str(seconds)], fmt)[0].resolution == 1.0
    from wagon.logs.parse import ParseOptions, parse_piece
    from wagon.logs.partition import shared_context
    from wagon.logs.pieces import plan
    pieces = plan([str(seconds), str(millis)], piece_bytes=700)
    results = [parse_piece(p, ParseOptions(fmt=fmt)) for p in pieces]
    assert len(pieces) > 4 and {r.places for r in results} == {0, 3}
    assert shared_context(results)[0].resolution == 0.001
    assert parse_bytes(b"not a log line\n", fmt)[0].resolution is None


@pytest.mark.parametrize("fmt", [[], ["--format", "combined"]])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_log_whose_every_date_is_impossible_says_so(tmp_path, fmt, workers):
    """A combined log dated 29 Feb 2001 (no such day) said 'no line could be parsed as no known
    format (auto-detection failed)', or '... as combined; give --format' with the right format:
    the message now counts the lines by reason, and auto-detection names the layout it read."""
    from click.testing import CliRunner
    from wagon.cli import main
    n = 40
    log = tmp_path / "leap.log"
    log.write_text("".join(f'10.0.0.{k} - - [29/Feb/2001:10:00:{k:02d} +0000] "GET /p{k}.html '
                           f'HTTP/1.0" 200 100 "-" "Mozilla/4.0"\n' for k in range(n)))
    r = CliRunner().invoke(main, ["fit", str(log), "--workers", workers, "-o",
                                  str(tmp_path / "m.json"), *fmt])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert f"as combined (impossible date or zone {n})" in r.output \
        or f"read as combined) (impossible date or zone {n})" in r.output, r.output


def test_a_truncated_gzip_says_how_far_it_decompressed(tmp_path):
    """A .gz cut in half said 'cannot decompress after 0 bytes' (the bytes handed over before
    the failing 64 MiB read): it says where the data ends, as zlib counts it from the cut
    file."""
    import zlib
    text = b"".join(b'10.0.0.%d - - [01/Aug/2001:10:00:00 +0000] "GET /p%d HTTP/1.0" 200 5\n'
                    % (k % 250, k) for k in range(20_000))
    whole = gzip.compress(text, mtime=0)
    cut = whole[:len(whole) // 2]
    (tmp_path / "a.log.gz").write_bytes(cut)
    reached = len(zlib.decompressobj(31).decompress(cut))
    assert 0 < reached < len(text)
    with pytest.raises(LogError, match=f"cannot decompress after {reached:,} bytes"):
        parse_logs([str(tmp_path / "a.log.gz")])


def test_a_run_of_nul_bytes_is_a_counted_line_not_a_client(tmp_path):
    """A crash leaves NUL bytes where a file's last blocks were never written, before the next
    line. In the first 200 lines they refused the whole log ('the client field is not an
    address ('\\x00\\x00...')'); later, '\\x00...10.0.0.1' was a client of its own, a session
    more. Each such line is now malformed under 'NUL bytes'; the other lines are all read."""
    rows = [f'10.0.0.{k % 5} - - [01/Aug/2001:10:{k // 60:02d}:{k % 60:02d} +0000] "GET /p{k} '
            f'HTTP/1.0" 200 5 "-" "Mozilla/4.0"' for k in range(300)]
    bad = {3, 250}
    log = tmp_path / "crash.log"
    log.write_bytes(b"".join((b"\0" * 40 if k in bad else b"") + r.encode() + b"\n"
                             for k, r in enumerate(rows)))
    req, stats = parse_logs([str(log)])
    assert stats.parsed == len(rows) - len(bad) and dict(stats.malformed) == {"NUL bytes": 2}
    assert sorted(set(req.hosts)) == sorted({r.split(" ")[0] for r in rows})
    assert [e[1] for e in stats.examples] == [k + 1 for k in sorted(bad)]
