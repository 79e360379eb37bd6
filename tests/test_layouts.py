"""Every common server layout, on realistic lines written here: Apache vhost_combined, Debian's
combined with %O, an extended Apache log with microsecond times and twenty more fields, nginx
combined and main, X-Forwarded-For-first logs, nginx escape=json, Caddy and Traefik JSON; plus
strftime times, calendar checks, a byte order mark, gz on standard input and truncated gz."""
from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.logs.logformat import FormatError, compile_format
from wagon.logs.parse import LogError, parse_bytes, parse_logs

from .conftest import require_tool

T0 = datetime(2024, 3, 5, 10, 0, 0, tzinfo=timezone.utc)
AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0"


def utc(seconds: float = 0.0) -> float:
    return (T0 + timedelta(seconds=seconds)).timestamp()


def lines(*rows: str) -> bytes:
    return ("\n".join(rows) + "\n").encode()


# ---- Apache ---------------------------------------------------------------------------------

VHOST = lines(
    f'www.example.com:443 203.0.113.5 - - [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 '
    f'5120 "-" "{AGENT}"',
    f'shop.example.com:80 198.51.100.7 - - [05/Mar/2024:10:00:01 +0000] "GET /a.css HTTP/1.1" '
    f'200 312 "http://shop.example.com/" "{AGENT}"',
    f'www.example.com:443 203.0.113.5 - - [05/Mar/2024:10:00:02 +0000] "GET /b.png HTTP/1.1" '
    f'304 0 "https://www.example.com/" "{AGENT}"')


def test_vhost_combined_is_detected_and_the_vhost_is_not_the_client():
    req, stats = parse_bytes(VHOST)
    assert stats.formats["<bytes>"].startswith("vhost_combined (auto-detected: 3/3")
    assert sorted(req.hosts) == ["198.51.100.7", "203.0.113.5"]
    assert sorted(req.vhosts) == ["shop.example.com", "www.example.com"]
    assert req.size.tolist() == [5120, 312, 0]                     # %O read as the size
    assert req.referers[req.referer[1]] == "http://shop.example.com/"


def test_debian_combined_with_percent_O_keeps_sizes():
    debian = '%h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"'
    req, stats = parse_bytes(lines(
        f'192.0.2.1 - - [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 5396 "-" "{AGENT}"'),
        debian)
    assert stats.parsed == 1 and req.size.tolist() == [5396]
    both = compile_format('%h %t "%r" %O %b')                      # %b wins over %O
    req, _ = parse_bytes(b'h [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" 700 500\n', both)
    assert req.size.tolist() == [500]


EXTENDED = ('%h %l %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %b "%{Referer}i" '
            '"%{User-Agent}i" %v %A %p %D %{ms}T %I %O %S %k %X %{SSL_PROTOCOL}x %{SSL_CIPHER}x '
            '"%{Content-Type}o" %L %P %{tid}P %R %{UNIQUE_ID}e %^FB')


def test_extended_apache_log_with_microseconds_and_twenty_more_fields():
    row = ('192.0.2.4 - alice [2024-03-05 10:00:00.123456] "GET /index.html HTTP/1.1" 200 5120 '
           '"https://www.example.com/start" "{a}" www.example.com 10.0.0.1 443 1834 1 918 6210 '
           '7128 0 + TLSv1.3 TLS_AES_256_GCM_SHA384 "text/html; charset=UTF-8" ZecXo2Qa 4123 '
           '140021 php-fpm ZecXo2QaAAAB 812').format(a=AGENT)
    req, stats = parse_bytes(lines(row, row.replace("10:00:00.123456", "10:00:31.000001")),
                             EXTENDED)
    assert stats.parsed == 2, stats.examples
    assert req.time.tolist() == [utc(0.123456), utc(31.000001)]
    assert req.duration.tolist() == [pytest.approx(0.001834)] * 2    # %D beats %{ms}T
    assert req.content_types == ["text/html; charset=UTF-8"]
    assert req.resolution == 1e-6                  # usec_frac: a microsecond grid


@pytest.mark.parametrize("spec, text, seconds", [
    ("%{%Y-%m-%dT%H:%M:%S%z}t", "2024-03-05T11:00:00+0100", 0),
    ("%{%d/%b/%Y %T}t", "05/Mar/2024 10:00:07", 7),
    ("%{%a, %d %B %Y %I:%M:%S %p}t", "Tue, 05 March 2024 10:00:08 AM", 8),
    ("%{%s}t", str(int(utc(9))), 9),
    ("%{begin:msec}t", str(int(utc(1.25) * 1000)), 1.25),
    ("%{sec}t.%{msec_frac}t", f"{int(utc(2))}.750", 2.75),
    ("%{%j %Y %H:%M:%S}t", "065 2024 10:00:03", 3),
])
def test_strftime_and_special_times(spec, text, seconds):
    req, stats = parse_bytes(f'h [{text}] "GET / HTTP/1.1" 200 1\n'.encode(),
                             f'%h [{spec}] "%r" %>s %b')
    assert stats.parsed == 1, stats.examples
    assert req.time[0] == pytest.approx(utc(seconds), abs=1e-6)


def test_begin_and_end_times_give_the_duration_and_end_alone_is_shifted():
    fmt = '%h %{begin:msec}t %{end:msec}t "%r" %>s %b'
    b, e = int(utc(1) * 1000), int(utc(1.5) * 1000)
    req, _ = parse_bytes(f'h {b} {e} "GET / HTTP/1.1" 200 1\n'.encode(), fmt)
    assert req.time[0] == utc(1) and req.duration[0] == pytest.approx(0.5)
    req, _ = parse_bytes(f'h {e} 500 "GET / HTTP/1.1" 200 1\n'.encode(),
                         '%h %{end:msec}t %{ms}T "%r" %>s %b')
    assert req.time[0] == pytest.approx(utc(1))                     # end minus the duration


def test_method_path_query_protocol_fields():
    fmt = '%h %t %m %U%q %H %>s %b'
    row = b'h [05/Mar/2024:10:00:00 +0000] POST /cart/add?id=7 HTTP/1.1 201 12\n'
    req, stats = parse_bytes(row, fmt)
    assert stats.parsed == 1 and req.urls == ["/cart/add"] and req.methods == ["POST"]
    req, _ = parse_bytes(row, fmt, keep_query=True)
    assert req.urls == ["/cart/add?id=7"]


def test_every_apache_directive_is_read_or_skipped():
    letters = "aAbBCDefhHiklLmnopPqrRsStTuUvVXIOxc"
    spec = " ".join(f"%{{X}}{c}" if c in "Ceinoxc" else f"%{c}" for c in letters)
    spec += " %{X}^ti %{X}^to %^FB %!200,304{Referer}i %400,501{User-agent}i %<s %>s"
    fmt = compile_format(spec.replace("%t", "[%t]").replace("%r", '"%r"'))
    assert fmt.has("time") and fmt.has("request")
    with pytest.raises(FormatError, match="unknown directive"):
        compile_format('%h %t "%r" %Q')


# ---- nginx ----------------------------------------------------------------------------------

def test_nginx_main_is_detected_and_the_forwarded_field_is_not_glued_to_the_agent():
    data = lines(
        f'203.0.113.5 - - [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "{AGENT}" '
        '"198.51.100.1, 10.0.0.2"',
        '10.0.0.9 - - [05/Mar/2024:10:00:01 +0000] "GET /x HTTP/1.1" 200 612 "-" "curl/8.4.0" '
        '"-"')
    req, stats = parse_bytes(data)
    assert stats.formats["<bytes>"].startswith("nginx-main")
    assert sorted(req.agents) == sorted([AGENT, "curl/8.4.0"])
    assert sorted(req.hosts) == ["10.0.0.9", "203.0.113.5"]
    req, _ = parse_bytes(data, "nginx-main", client="forwarded")
    assert sorted(req.hosts) == ["10.0.0.9", "198.51.100.1"]     # no forwarded field: the peer


def test_nginx_log_format_string_with_float_times():
    fmt = ('$remote_addr [$msec] "$request" $status $body_bytes_sent $request_time '
           '$upstream_response_time')
    end = utc(10.5)
    req, stats = parse_bytes(lines(
        f'192.0.2.1 [{end:.3f}] "GET / HTTP/1.1" 200 612 0.250 0.249, 0.001',
        f'192.0.2.1 [{end:.3f}] "GET /a HTTP/1.1" 200 612 0.125 -'), fmt)
    assert stats.parsed == 2, stats.examples
    assert req.duration.tolist() == [0.25, 0.125]                # $request_time wins
    assert req.time.tolist() == pytest.approx([end - 0.25, end - 0.125])   # logged at the end


def test_nginx_docs_upstream_time_layout_without_its_space_keeps_its_durations():
    """nginx's documentation prints the upstream_time log_format with no space before rt=:
    servers configured from it glue rt= to the agent's quote. Such lines also read as combined
    (trailing text allowed), which would drop every duration without a word."""
    text = [f'198.51.100.7 - - [05/Mar/2024:10:00:0{k} +0000] "GET /{k} HTTP/1.1" 200 5120 '
            f'"-" "Mozilla/5.0 (X11)"rt=0.01{k} uct="0.000" uht="0.01{k}" urt="0.01{k}"'
            for k in range(3)]
    req, stats = parse_bytes(lines(*text))
    assert stats.parsed == 3 and "nginx-timing-docs" in stats.formats["<bytes>"], stats.formats
    assert req.duration.tolist() == [0.010, 0.011, 0.012]
    spaced, stats = parse_bytes(lines(*(t.replace('"rt=', '" rt=') for t in text)))
    assert "nginx-timing " in stats.formats["<bytes>"] + " "
    assert spaced.duration.tolist() == req.duration.tolist()


def test_forwarded_for_first_log_is_refused_by_auto_and_read_when_told(tmp_path):
    rows = lines(f'198.51.100.1, 10.0.0.2 - - [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" '
                 f'200 612 "-" "{AGENT}"',
                 f'198.51.100.9 - - [05/Mar/2024:10:00:05 +0000] "GET / HTTP/1.1" 200 612 "-" '
                 f'"{AGENT}"')
    log = tmp_path / "proxy.log"
    log.write_bytes(rows)
    with pytest.raises(LogError, match=r"not an address \('198.51.100.1,'\).*combined"):
        parse_logs([str(log)])
    r = CliRunner().invoke(main, ["fit", str(log)])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    fmt = '%{X-Forwarded-For}i %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"'
    req, stats = parse_logs([str(log)], fmt)
    assert stats.parsed == 2 and sorted(req.hosts) == ["198.51.100.1", "198.51.100.9"]
    with pytest.raises(LogError, match="no X-Forwarded-For field"):
        parse_logs([str(log)], "combined", client="forwarded")


# ---- JSON lines -----------------------------------------------------------------------------

def _nginx_json(i: int, request_time: float) -> str:
    end = T0 + timedelta(seconds=10 * i)
    return json.dumps({"time_iso8601": end.isoformat(), "remote_addr": f"192.0.2.{i % 3}",
                       "request": f"GET /p{i}.html HTTP/1.1", "status": "200",
                       "body_bytes_sent": str(600 + i), "request_time": f"{request_time:.3f}",
                       "http_referer": "", "http_user_agent": AGENT})


def test_nginx_escape_json():
    data = lines(*(_nginx_json(i, 0.25) for i in range(6)))
    req, stats = parse_bytes(data)
    assert stats.formats["<bytes>"].startswith("nginx-json (auto-detected: 6/6")
    assert req.time.tolist() == [utc(10 * i) - 0.25 for i in range(6)]
    assert req.size.tolist() == [600 + i for i in range(6)]
    assert set(req.agents) == {AGENT}


CADDY = {"level": "info", "ts": utc(0.5), "logger": "http.log.access.log0",
         "msg": "handled request",
         "request": {"remote_ip": "192.0.2.4", "remote_port": "51034", "client_ip": "192.0.2.4",
                     "proto": "HTTP/2.0", "method": "GET", "host": "example.com",
                     "uri": "/img/logo.png?v=2",
                     "headers": {"User-Agent": [AGENT], "Referer": ["https://example.com/"],
                                 "Accept": ["image/avif,image/webp,*/*"]}},
         "bytes_read": 0, "user_id": "", "duration": 0.000929675, "size": 10900, "status": 200,
         "resp_headers": {"Server": ["Caddy"], "Content-Type": ["image/png"]}}
TRAEFIK = {"ClientAddr": "192.0.2.4:51034", "ClientHost": "192.0.2.4", "ClientPort": "51034",
           "ClientUsername": "-", "DownstreamContentSize": 612, "DownstreamStatus": 200,
           "Duration": 1234567, "OriginContentSize": 612, "OriginDuration": 1100000,
           "OriginStatus": 200, "Overhead": 134567, "RequestAddr": "example.com",
           "RequestContentSize": 0, "RequestCount": 42, "RequestHost": "example.com",
           "RequestMethod": "GET", "RequestPath": "/index.html", "RequestPort": "-",
           "RequestProtocol": "HTTP/1.1", "RequestScheme": "https", "RetryAttempts": 0,
           "RouterName": "web@docker", "StartLocal": "2024-03-05T10:00:00.123456789Z",
           "StartUTC": "2024-03-05T10:00:00.123456789Z", "entryPointName": "websecure",
           "level": "info", "msg": "", "request_User-Agent": AGENT, "time": "2024-03-05T10:00:01Z"}


def test_caddy_json():
    req, stats = parse_bytes(lines(json.dumps(CADDY), "not json at all", ""))
    assert stats.formats["<bytes>"].startswith("caddy")
    assert dict(stats.malformed) == {"not JSON": 1, "empty line": 1}
    assert req.time[0] == pytest.approx(utc(0.5) - 0.000929675)
    assert req.urls == ["/img/logo.png"] and req.content_types == ["image/png"]
    assert req.referers == ["https://example.com/"] and req.vhosts == ["example.com"]
    assert req.size.tolist() == [10900]


def test_traefik_json():
    req, stats = parse_bytes(lines(json.dumps(TRAEFIK)), "traefik")
    assert stats.parsed == 1
    assert req.time[0] == pytest.approx(utc(0.123456789), abs=1e-6)
    assert req.duration[0] == pytest.approx(0.001234567)
    assert req.urls == ["/index.html"] and req.hosts == ["192.0.2.4"]


# ---- dates, bytes, compression --------------------------------------------------------------

def test_impossible_dates_and_zones_are_malformed():
    data = lines(*(f'h - - [{d}] "GET / HTTP/1.0" 200 1' for d in (
        "31/Feb/2024:10:00:00 +0000", "29/Feb/2023:10:00:00 +0000", "01/Feb/2024:10:00:00 +9999",
        "01/Feb/0000:10:00:00 +0000", "01/Feb/2024:24:00:00 +0000", "29/Feb/2024:10:00:00 +0000")))
    req, stats = parse_bytes(data, "common")
    assert dict(stats.malformed) == {"impossible date or zone": 5}
    assert req.time.tolist() == [datetime(2024, 2, 29, 10, tzinfo=timezone.utc).timestamp()]


def test_byte_order_mark_gz_on_stdin_and_truncated_gz(tmp_path):
    row = f'192.0.2.1 - - [05/Mar/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "{AGENT}"'
    req, stats = parse_bytes(b"\xef\xbb\xbf" + lines(row))
    assert stats.parsed == 1 and req.hosts == ["192.0.2.1"]
    data = lines(*[row.replace(":00:00 ", f":{m:02d}:00 ") for m in range(30)])
    r = CliRunner().invoke(main, ["fit", "-", "-o", tmp_path / "m.json", "--json"],
                           input=gzip.compress(data))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["parsed"] == 30
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(data * 200)[:-40])
    with pytest.raises(LogError, match=r"cut\.log\.gz: cannot decompress .*truncated"):
        parse_logs([str(cut)])


def test_zstd_log_of_two_frames_parses_and_errors_are_one_line(tmp_path, monkeypatch):
    """A log compressed by the ``zstd`` program in two frames parses as the plain one, and so
    does ``pzstd``'s output (a skippable frame first); cut short, it is a one-line error; with
    no zstd module, one that says what to install."""
    import subprocess
    import wagon.logs.pieces
    zstd, pzstd = require_tool("zstd"), require_tool("pzstd")
    row = '192.0.2.1 - - [05/Mar/2024:10:{m:02d}:00 +0000] "GET / HTTP/1.1" 200 1'
    halves = [lines(*[row.format(m=m) for m in range(k, k + 30)]) for k in (0, 30)]
    packed = b"".join(subprocess.run([zstd, "-q", "-c"], input=h, capture_output=True,
                                     check=True).stdout for h in halves)
    plain, _ = parse_bytes(b"".join(halves))
    (tmp_path / "a.log").write_bytes(b"".join(halves))
    subprocess.run([pzstd, "-q", "-p", "2", str(tmp_path / "a.log"), "-o",
                    str(tmp_path / "p.log.zst")], check=True)
    req, stats = parse_logs([str(tmp_path / "p.log.zst")])
    assert stats.parsed == 60 and req.time.tolist() == plain.time.tolist()
    log = tmp_path / "a.log.zst"
    log.write_bytes(packed)
    req, stats = parse_logs([str(log)])
    assert stats.parsed == 60 and req.time.tolist() == plain.time.tolist()
    log.write_bytes(packed[:-12])
    with pytest.raises(LogError, match=r"a\.log\.zst: cannot decompress .*truncated"):
        parse_logs([str(log)])
    monkeypatch.setattr(wagon.logs.pieces, "zstd", None)
    with pytest.raises(LogError, match=r"a\.log\.zst: a zstd-compressed log needs .*\[zst\]"):
        parse_logs([str(log)])


def test_json_records_without_the_layout_keys_are_counted():
    req, stats = parse_bytes(lines('{"a": 1}', "[1, 2]"), "caddy")
    assert stats.parsed == 0 and stats.malformed_total == 1       # [1, 2]: not JSON
    assert stats.skipped == {"not an access record": 1}           # an object with no request
    assert np.all(req.time == 0) and len(req) == 0


def test_json_values_with_newlines_or_separators_stay_one_field():
    rec = json.loads(_nginx_json(1, 0.5))
    rec["http_user_agent"] = "odd\nagent\x1fname"
    req, stats = parse_bytes(lines(json.dumps(rec)))
    assert stats.parsed == 1 and req.agents == ["odd agent name"]


@pytest.mark.parametrize("mark", ["-", "unix:"])
def test_a_client_without_an_address_is_no_proxy_log(tmp_path, mark):
    """nginx writes 'unix:' for a client on a Unix socket, servers '-' for none: one such line
    among the first 200 refused the whole log as a proxy's ('the client field is not an
    address'). It is read; its clients are the distinct first fields written."""
    rows = [f'{mark if k == 3 else f"192.0.2.{k % 7}"} - - [05/Mar/2024:10:00:{k:02d} +0000] '
            f'"GET /p{k}.html HTTP/1.1" 200 612 "-" "{AGENT}"' for k in range(30)]
    log = tmp_path / "access.log"
    log.write_bytes(lines(*rows))
    req, stats = parse_logs([str(log)])
    assert stats.parsed == 30 and "combined" in stats.formats[str(log)]
    assert sorted(set(req.hosts)) == sorted({r.split(" ")[0] for r in rows})
