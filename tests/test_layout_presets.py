"""Every layout GoAccess reads, and more (issue 26): each sample under tests/data/layouts/ (public
projects' test fixtures carried byte for byte where one exists) is detected with no --format and
read field for field as an independent reader of the format's documented field list reads it (a
regex or a split per format, the standard library's time, URL, CSV and JSON parsers; a line the
reader rejects must be counted malformed, not read); nginx's $msec tails; a W3C file's own
#Fields: lines, a file mixing Common and Combined lines, absolute-URI targets and long URLs;
people behind one address kept apart from a crawler."""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.model import load_model
from wagon.logs.parse import parse_bytes, parse_logs, parse_piece
from wagon.logs.pieces import plan
from wagon.logs.paths import template_path
from wagon.logs.sessions import SessionRules, sessionize
from wagon.logs.urls import LONG, MAX_URL_CHARS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from baseline_parser import parse_line  # noqa: E402

LAYOUTS = Path(__file__).resolve().parent / "data" / "layouts"
NAN = float("nan")


def _tokens(line: str) -> list[str]:
    """Space-separated fields, a quoted or bracketed field kept whole (the AWS documents'
    field lists count them so)."""
    return [t.strip('"[]') for t in re.findall(r'"[^"]*"|\[[^\]]*\]|\S+', line)]


def _iso(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=timezone.utc).timestamp()


def _clf(text: str) -> float:
    return datetime.strptime(text, "%d/%b/%Y:%H:%M:%S %z").timestamp()


def _path(target: str) -> str:
    """The documented page rule: an absolute URI's path, without the query; a CONNECT
    target (host:port) the one page /{tunnel}."""
    if re.fullmatch(r"[\w.-]+:\d+", target):
        return "/{tunnel}"
    m = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*", target)
    target = target[m.end():] or "/" if m else target
    target = target.split("?", 1)[0]
    return target if target.startswith("/") else "/" + target       # OPTIONS *: /*


def _secs(text: str, unit: float = 1.0) -> float:
    return NAN if text in ("-", "-1") else float(text) * unit


def _request(text: str) -> tuple[str, str]:
    method, target = text.split(" ")[:2]
    return method, _path(target)


def _or_none(reader):
    """A reader that gives None for a line its layout rejects (a blank line, another record)."""
    def read(line: str):
        try:
            return reader(line)
        except (AttributeError, ValueError, IndexError):
            return None
    return read


def _row(client, start, method, path, status, size, duration):
    return (client, round(start, 6), method, path, int(status),
            0 if size in ("-", "") else int(size), duration)


def _aws(line: str, offset: int) -> tuple:
    """AWS ALB (offset 1: the type first) and Classic ELB access-log fields."""
    f = _tokens(line)[offset:]
    d = _secs(f[5])
    end = _iso(f[0])
    return _row(f[2].rsplit(":", 1)[0], end - (0 if math.isnan(d) else d), *_request(f[11]),
                f[7], f[10], d)


def _s3(line: str) -> tuple:
    f = _tokens(line)
    return _row(f[3], _clf(f[2]), *_request(f[8]), f[9], f[11], _secs(f[13], 1e-3))


def _squid(line: str) -> tuple:
    f = line.split(" ")
    f = [x for x in f if x]                              # Squid pads the elapsed column
    d = _secs(f[1], 1e-3)
    return _row(f[2], float(f[0]) - d, f[5], _path(f[6]), f[3].split("/")[1], f[4], d)


_HAPROXY = re.compile(r'.*?: (\S+):\d+ \[(\S+)\] \S+ \S+ [-\d]+/[-\d]+/[-\d]+/[-\d]+/\+?(-?\d+) '
                      r'(-?\d+) (\d+) .* "([^"]*)"$')


def _haproxy(line: str) -> tuple:
    client, when, tt, status, size, request = _HAPROXY.match(line).groups()
    start = datetime.strptime(when, "%d/%b/%Y:%H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return _row(client, start.timestamp(), *_request(request), status, size, _secs(tt, 1e-3))


_COMBINED = re.compile(r'(\S+) \S+ \S+ \[([^\]]+)\] "([^"]*)" (\d{3}) (\S+) "[^"]*" "[^"]*"(.*)$')


def _combined_with(tail_duration, end: bool):
    """A reader of combined + a tail: ``tail_duration(tail)`` gives the duration; ``end``:
    nginx logs the end of the request (its start is the time minus the duration)."""
    def read(line: str) -> tuple:
        client, when, request, status, size, tail = _COMBINED.match(line).groups()
        d = tail_duration(tail)
        shift = d if end and not math.isnan(d) else 0.0
        return _row(client, _clf(when) - shift, *_request(request), status, size, d)
    return read


def _msec(line: str) -> tuple:
    """combined + [$request_time] $msec: nginx's end time, ten digits, a dot and three."""
    client, _, request, status, size, tail = _COMBINED.match(line).groups()
    *taken, msec = tail.split()
    if not re.fullmatch(r"\d{10}\.\d{3}", msec):
        raise ValueError(msec)
    d = _secs(taken[0]) if taken else NAN
    return _row(client, float(msec) - (0 if math.isnan(d) else d), *_request(request), status,
                size, d)


def _traefik(line: str) -> tuple:
    """Traefik's CLF: combined, then the request count, "router" "server URL" and Nms."""
    return _combined_with(lambda t: _secs(re.fullmatch(r' \d+ "[^"]*" "[^"]*" (\d+)ms', t)
                                          .group(1), 1e-3), end=False)(line)


def _netnea(duration: int):
    """netnea's extended layouts: ``%D`` (µs) is field ``duration`` (22 in 2015's, 24 since
    the Content-Type and the client's port were added)."""
    def read(line: str) -> tuple:
        f = _tokens(line)
        start = datetime.strptime(f[3], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
        return _row(f[0], start.timestamp(), *_request(f[4]), f[5], f[6],
                    _secs(f[duration], 1e-6))
    return read


def _vcommon(line: str) -> tuple:
    f = _tokens(line)
    return _row(f[1], _clf(f[4]), *_request(f[5]), f[6], f[7], NAN)


def _cloudstorage(rows: list[dict]) -> list[tuple]:
    return [_row(r["c_ip"], int(r["time_micros"]) / 1e6, r["cs_method"], _path(r["cs_uri"]),
                 r["sc_status"], r["sc_bytes"], int(r["time_taken_micros"]) / 1e6) for r in rows]


def _w3c(text: str) -> list[tuple]:
    """W3C extended: each record read through the #Fields: line before it."""
    out, names = [], []
    for line in text.splitlines():
        if line.startswith("#Fields:"):
            names = line.split()[1:]
        if line.startswith("#") or not line:
            continue
        values = line.split("\t") if "\t" in line else line.split(" ")
        if len(values) < len(names):                 # not written with this #Fields: line
            out.append(None)
            continue
        r = dict(zip(names, values))
        when = datetime.strptime(r["date"] + " " + r["time"], "%Y-%m-%d %H:%M:%S")
        unit = 1.0 if "x-edge-location" in r else 1e-3
        out.append(_row(r["c-ip"], when.replace(tzinfo=timezone.utc).timestamp(),
                        r["cs-method"], r["cs-uri-stem"], r["sc-status"], r.get("sc-bytes", "-"),
                        _secs(r["time-taken"], unit)))
    return out


def _caddy(text: str) -> list[tuple]:
    out = []
    for rec in map(json.loads, text.splitlines()):
        if "request" in rec:
            r = rec["request"]
            out.append(_row(r["client_ip"], rec["ts"] - rec["duration"], r["method"],
                            _path(r["uri"]), rec["status"], rec["size"], rec["duration"]))
    return out


def _lines(reader):
    return lambda text: [_or_none(reader)(x) for x in text.splitlines()]


#: readers of layouts with more than one sample: nginx.com's rt= uct= uht= urt= tail (the
#: request's end less rt=), Apache's combined + %D (µs, the request's start)
_NGINX_TIMING = _lines(_combined_with(lambda t: _secs(re.search(r"rt=(\S+)", t).group(1)),
                                      end=True))
_COMBINED_D = _lines(_combined_with(lambda t: _secs(t.strip(), 1e-6), end=False))

#: sample → (the layout --format auto must name, an independent reader of its records)
SAMPLES = {
    "plaso-awsalb.log": ("awsalb", _lines(lambda x: _aws(x, 1))),
    "plaso-awselb.log": ("awselb", _lines(lambda x: _aws(x, 0))),
    "nekrassov-awss3.log": ("awss3", _lines(_s3)),
    "logstash-awselb.log": ("awselb-2014", _lines(lambda x: _aws(x, 0))),
    "logstash-awss3.log": ("awss3", _lines(_s3)),
    "cloudfront-web-1-0.txt": ("w3c #Fields", _w3c),
    "cloudfront-web-2019-12.txt": ("w3c #Fields", _w3c),
    "beats-iis.log": ("w3c #Fields", _w3c),
    "lnav-w3c-iis85.log": ("w3c #Fields", _w3c),
    "kanjiapi-cloudstorage.csv": ("cloudstorage",
                                  lambda t: _cloudstorage(list(csv.DictReader(t.splitlines())))),
    "plaso-squid.log": ("squid", _lines(_squid)),
    "lnav-haproxy.log": ("haproxy", _lines(_haproxy)),
    "beats-traefik.log": ("traefik-clf", _lines(_traefik)),
    "ghsa-caddy-stdout.log": ("caddy", _caddy),
    "lnav-caddy.log": ("caddy", _caddy),
    "netnea-extended.log": ("netnea-extended", _lines(_netnea(24))),
    "labor-netnea-extended-2015.log": ("netnea-extended-2015", _lines(_netnea(22))),
    "nginx-timed.log": ("nginx-timed", _lines(_combined_with(lambda t: _secs(t.strip()),
                                                             end=True))),
    "nginx-msec.log": ("nginx-msec", _lines(_msec)),
    "nginx-timed-msec.log": ("nginx-timed-msec", _lines(_msec)),
    "nginx-main-timed.log": ("nginx-main-timed", _lines(_combined_with(
        lambda t: _secs(t.split('" ')[1].split()[0]), end=True))),
    "nginx-timing.log": ("nginx-timing", _NGINX_TIMING),
    "botassasin-nginx-timing.log": ("nginx-timing", _NGINX_TIMING),
    "nginx-timing-docs.log": ("nginx-timing-docs", _NGINX_TIMING),
    "beats-ingress-nginx.log": ("ingress-nginx", _lines(_combined_with(
        lambda t: _secs(t.split()[1]), end=True))),
    "combined-D.log": ("combined-D", _COMBINED_D),
    "telegraf-combined-D.log": ("combined-D", _COMBINED_D),
    "vcommon.log": ("vcommon", _lines(_vcommon)),
    "lnav-combined.log": ("combined", _lines(_combined_with(lambda t: NAN, end=False))),
    "combinedio.log": ("combinedio", _lines(_combined_with(lambda t: NAN, end=False))),
    "nginx-main.log": ("nginx-main", _lines(_combined_with(lambda t: NAN, end=False))),
    "vcombined.log": ("vcombined", _lines(_vcommon)),
    "vhost_combined.log": ("vhost_combined", _lines(_vcommon)),
    "combined-T.log": ("combined-T", _lines(_combined_with(lambda t: _secs(t.strip(), 1.0),
                                                            end=False))),
    "combined-ms.log": ("combined-ms", _lines(_combined_with(lambda t: _secs(t.strip(), 1e-3),
                                                              end=False))),
}
#: layouts read only when named: their lines are those of another (combined-T's and
#: combined-ms' are combined-D's: a whole number after the agent; vcombined's, with %b, are
#: Debian's vhost_combined's, with %O)
NAMED_ONLY = {"combined-T", "combined-ms", "vcombined"}


def _ours(req) -> list[tuple]:
    return [(req.hosts[h], round(t, 6), req.methods[m], req.urls[u].split("?", 1)[0], s, z, d)
            for h, t, m, u, s, z, d in zip(req.host.tolist(), req.time.tolist(),
                                           req.method.tolist(), req.url.tolist(),
                                           req.status.tolist(), req.size.tolist(),
                                           req.duration.tolist())]


def _same(a: tuple, b: tuple) -> bool:
    """Equal field for field; durations to the nanosecond, NaN equal to NaN."""
    (*x, dx), (*y, dy) = a, b
    return x == y and (math.isnan(dx) and math.isnan(dy) or abs(dx - dy) < 1e-9)


def test_every_sample_has_a_provenance():
    readme = (LAYOUTS / "README.md").read_text()
    assert sorted(p.name for p in LAYOUTS.iterdir() if p.name != "README.md") == sorted(SAMPLES)
    assert all(f"`{name}`" in readme for name in SAMPLES)
    sums = dict(re.findall(r"^\| `([^`]+)` .*`([0-9a-f]{64})` \|$", readme, re.M))
    assert len(sums) == 20                   # the public fixtures: carried byte for byte
    assert all(hashlib.sha256((LAYOUTS / n).read_bytes()).hexdigest() == h
               for n, h in sums.items())


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_layout_is_detected_and_read_as_its_documented_fields(name):
    layout, reader = SAMPLES[name]
    path = LAYOUTS / name
    named = layout in NAMED_ONLY
    req, stats = parse_logs([str(path)], layout if named else "auto")
    records = reader(path.read_text())
    expected = [r for r in records if r is not None]
    assert stats.formats[str(path)].startswith(layout if named else f"{layout} (auto-detected")
    assert stats.parsed == len(expected) > 0
    assert stats.malformed_total == len(records) - len(expected)     # rejected lines counted
    ours = sorted(_ours(req), key=repr)
    theirs = sorted(expected, key=repr)
    assert all(_same(a, b) for a, b in zip(ours, theirs)), (ours, theirs)
    assert not any("://" in u or re.search(r":\d+", u) for u in req.urls)   # no host, no port


def test_a_w3c_file_is_reread_when_its_fields_change_and_its_directives_are_not_malformed():
    path = str(LAYOUTS / "beats-iis.log")
    req, stats = parse_logs([path])
    assert stats.skipped == {"header line": 12}
    assert "new #Fields: at line 9; new #Fields: at line 14" in stats.formats[path]
    size = dict(zip((round(t) % 86400 for t in req.time.tolist()), req.size.tolist()))
    assert size == {8 * 3600 + 9 * 60 + 10: 0,                 # no sc-bytes in the first block
                    9 * 3600 + 10 * 60 + 11: 123, 10 * 3600 + 11 * 60 + 12: 123}


def test_a_piece_of_a_w3c_file_is_read_with_the_fields_line_before_it():
    path = str(LAYOUTS / "beats-iis.log")
    pieces = plan([path], piece_bytes=400)
    assert len(pieces) >= 4                  # cut inside the #Fields blocks
    whole, _ = parse_logs([path])
    parts = [parse_piece(p).chunks[0].requests for p in pieces]
    ours = sorted((r.urls[u], s) for r in parts for u, s in zip(r.url.tolist(), r.size.tolist()))
    assert ours == sorted(zip((whole.urls[u] for u in whole.url), whole.size.tolist()))


def test_a_file_mixing_common_and_combined_lines_reads_both(nasa):
    common = gzip.decompress(nasa.read_bytes()).splitlines()[:3000]
    combined = [b'198.51.100.7 - - [01/Aug/1995:00:00:%02d -0400] "GET /c%d.html HTTP/1.0" 200 '
                b'%d "-" "Mozilla/4.0"' % (k % 60, k, k) for k in range(4000)]
    mixed = combined[:1000] + [x for pair in zip(common, combined[1000:]) for x in pair]
    req, stats = parse_bytes(b"\n".join(mixed) + b"\n")
    assert stats.parsed == 7000 and stats.malformed_total == 0
    assert "3,000 lines read as common" in stats.formats["<bytes>"]
    read = _combined_with(lambda t: NAN, end=False)
    expected = [(r[0], r[1], r[3].strip(), r[5]) if r else read(x.decode())[:2] + (
        read(x.decode())[3], read(x.decode())[5]) for x, r in ((x, parse_line(x)) for x in mixed)]
    ours = list(zip((req.hosts[h] for h in req.host), req.time.tolist(),
                    (req.urls[u] for u in req.url), req.size.tolist()))
    assert ours == expected                                       # in the file's order


def test_long_urls_are_cut_and_counted_and_the_cut_survives_templating():
    long_path = "/search/" + "a" * 100_000
    data = (f'192.0.2.1 - - [05/Mar/2024:10:00:00 +0000] "GET {long_path} HTTP/1.1" 200 1\n'
            f'192.0.2.1 - - [05/Mar/2024:10:00:01 +0000] "GET /ok HTTP/1.1" 200 1\n').encode()
    req, stats = parse_bytes(data)
    assert stats.long_urls == 1 and stats.parsed == 2
    kept = req.urls[req.url[0]]
    assert kept == long_path[:MAX_URL_CHARS] + LONG and len(kept) == MAX_URL_CHARS + len(LONG)
    assert template_path(kept).endswith(LONG)


def test_people_behind_one_address_stay_apart_and_a_crawler_takes_only_its_own_requests():
    rows = []
    for k in range(60):                       # 60 people behind one reverse proxy
        agent = f"Mozilla/5.0 (X11; Linux x86_64; rv:{60 + k}.0) Gecko/20100101 Firefox/{60 + k}.0"
        for j, page in enumerate(("/", f"/p{k}.html")):
            rows.append((k * 10 + j * 5, page, agent))
    bot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    rows += [(3, "/robots.txt", bot), (4, "/", bot)]
    log = "".join(f'10.0.0.1 - - [05/Mar/2024:10:{t // 60:02d}:{t % 60:02d} +0000] "GET {p} '
                  f'HTTP/1.1" 200 100 "-" "{a}"\n' for t, p, a in sorted(rows))
    req, _ = parse_bytes(log.encode())
    people = sessionize(req, SessionRules())
    assert people.counts["robot_clients"] == 1 and people.counts["robot_requests"] == 2
    assert people.counts["sessions"] == 60
    one = sessionize(req, SessionRules(identity="host"))      # the address alone: all lost
    assert one.counts["robot_requests"] == 122 and one.counts["sessions"] == 0
    assert np.all(people.samples["clicks"] == 2)


def test_nginx_times_need_their_decimals():
    """nginx writes $request_time as %.3f: whole numbers after a quoted field are not taken for
    nginx-main-timed's seconds (512 s)."""
    line = ('198.51.100.7 - - [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 5120 "-" '
            '"Mozilla/5.0 (X11)" "x" {} 77 abc\n')
    _, stats = parse_bytes(line.format(512).encode())
    assert not stats.formats["<bytes>"].startswith("nginx-main-timed")
    req, stats = parse_bytes(line.format("0.512").encode())
    assert stats.formats["<bytes>"].startswith("nginx-main-timed") and req.duration[0] == 0.512


@pytest.mark.parametrize("tail, layout", [(" 0.250", "nginx-timed"),
                                          (" 1700000000", "combined-D"),
                                          (" 1700000000.123", "nginx-msec"),
                                          (" 0.250 1700000000.123", "nginx-timed-msec")])
def test_an_nginx_msec_tail_is_ten_digits_a_dot_and_three(tail, layout):
    """$msec is written %T.%03M: $request_time's 0.250 or Apache's %D is not taken for it."""
    line = ('198.51.100.7 - - [14/Nov/2023:22:13:20 +0000] "GET / HTTP/1.1" 200 5120 "-" '
            f'"Mozilla/5.0 (X11)"{tail}\n')
    req, stats = parse_bytes(line.encode())
    assert stats.formats["<bytes>"].startswith(f"{layout} (auto-detected")
    assert stats.parsed == 1


def test_a_client_written_address_colon_port_keeps_its_ipv6_address():
    alb = (LAYOUTS / "plaso-awsalb.log").read_text().splitlines()[0].replace(
        "192.168.1.10:44325", "2001:db8::1:44325")
    haproxy = (LAYOUTS / "lnav-haproxy.log").read_text().splitlines()[3].replace(
        "141.35.244.171:53332", "[2001:db8::7]:53332")
    for line, host in ((alb, "2001:db8::1"), (haproxy, "[2001:db8::7]")):
        req, stats = parse_bytes((line + "\n").encode())
        assert stats.parsed == 1 and req.hosts == [host]


def test_skipped_lines_and_cut_urls_agree_in_the_console_the_json_and_the_model(tmp_path):
    agent = "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0"
    rows = ["# written by hand\n"]
    for k in range(40):
        for j, page in enumerate(("/", f"/p{k % 7}.html", "/q/" + "z" * (2000 + k % 2))):
            t = 60 * k + 5 * j
            rows.append(f'192.0.2.{k} - - [05/Mar/2024:10:{t // 60:02d}:{t % 60:02d} +0000] '
                        f'"GET {page} HTTP/1.1" 200 {100 + j} "-" "{agent}"\n')
    log = tmp_path / "x.log"
    log.write_text("".join(rows))
    text = CliRunner().invoke(main, ["fit", str(log), "-o", str(tmp_path / "m.json")])
    js = CliRunner().invoke(main, ["fit", str(log), "-o", str(tmp_path / "j.json"), "--json"])
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    summary = json.loads(js.stdout)
    provenance = load_model(tmp_path / "m.json").provenance
    assert summary["skipped"] == provenance["skipped"] == {"header line": 1}
    assert summary["long_urls"] == provenance["long_urls"] == 40
    assert summary["malformed"] == provenance["malformed"] == 0
    assert "skipped: header line 1" in text.stdout
    assert "cut (ending in {long}): 40 requests" in text.stdout
    assert sum(1 for u in json.dumps(load_model(tmp_path / "m.json").data["site"]).split('"')
               if u.endswith(LONG)) == 1                 # the two long URLs: one page

