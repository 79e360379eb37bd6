"""Parse throughput by layout, same run: Common (NASA), Combined with referers and agents (the
bundled sample), nginx JSON lines (NASA's requests written as ``escape=json`` records), and
NASA's requests written in each layout of issue 26 (AWS ALB, ELB and S3, W3C/IIS, CloudFront,
Cloud Storage, Squid, HAProxy, Traefik CLF, nginx and Apache with durations, netnea's extended
Apache layout, a file mixing Common and Combined lines), each against the baseline regex parser
(``baseline_parser.py``) on the same requests as Common, in the same process.

    python bench/layouts_bench.py [--lines 1000000] [--new-lines 500000]

Run it with another checkout's wagon on the path for a before/after ratio; layouts that wagon
does not know are reported as such.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from importlib import resources
from pathlib import Path

from wagon.logs.parse import LogError, parse_bytes, parse_logs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline_parser import parse_file  # noqa: E402

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"
AGENTS = ("Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/122.0.0.0 Safari/537.36", "curl/8.5.0")


def repeated(src: bytes, lines: int, first: date, form: str) -> bytes:
    """``src`` (one day, ``first``) repeated until it has ``lines`` lines, copy k moved k days
    later (its dates written as ``form``)."""
    copies = -(-lines // src.count(b"\n"))
    day = first.strftime(form).encode()
    return b"".join(src.replace(day, (first + timedelta(days=k)).strftime(form).encode())
                    for k in range(copies))


def nasa_json(src: bytes) -> bytes:
    req, _ = parse_bytes(src, "common")
    out = []
    for i in range(len(req)):
        t = datetime.fromtimestamp(req.time[i], timezone.utc).isoformat()
        out.append(json.dumps({
            "time_iso8601": t, "remote_addr": req.hosts[req.host[i]],
            "request": f"{req.methods[req.method[i]]} {req.urls[req.url[i]]} HTTP/1.0",
            "status": str(req.status[i]), "body_bytes_sent": str(req.size[i]),
            "request_time": "0.012", "http_referer": "", "http_user_agent": "Mozilla/5.0"}))
    return ("\n".join(out) + "\n").encode()


def _stamp(t: float, form: str) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime(form)


def _combined(h: str, t: float, m: str, u: str, s: int, z: int, a: str | None, tail: str
              ) -> str:
    """A Combined line and ``tail`` (a Common line when ``a`` is None)."""
    agent = "" if a is None else f' "-" "{a}"'
    when = _stamp(t, "%d/%b/%Y:%H:%M:%S +0000")
    return f'{h} - - [{when}] "{m} {u} HTTP/1.1" {s} {z}{agent}{tail}'


#: each layout of issue 26 as a function of one request: (host, UTC seconds, method, URL,
#: status, size, agent, duration in ms); the file's header lines
RENDER = {
    "awsalb": (lambda h, t, m, u, s, z, a, d:
               f'http {_stamp(t, "%Y-%m-%dT%H:%M:%S")}.{int(t * 1e6) % 1000000:06d}Z '
               f'app/my-lb/50dc6c495c0c9188 {h}:2817 10.0.0.1:80 0.000 {d / 1e3:.3f} 0.000 {s} '
               f'{s} 34 {z} "{m} http://www.example.com:80{u} HTTP/1.1" "{a}" - - '
               'arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/'
               '73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 '
               f'{_stamp(t, "%Y-%m-%dT%H:%M:%S")}.000000Z "forward" "-" "-" "10.0.0.1:80" '
               f'"{s}" "-" "-" TID_1234abcd5678ef90', ""),
    "awselb": (lambda h, t, m, u, s, z, a, d:
               f'{_stamp(t, "%Y-%m-%dT%H:%M:%S")}.{int(t * 1e6) % 1000000:06d}Z my-lb '
               f'{h}:2817 10.0.0.1:80 0.000073 {d / 1e3:.6f} 0.000057 {s} {s} 0 {z} '
               f'"{m} http://www.example.com:80{u} HTTP/1.1" "{a}" - -', ""),
    "awss3": (lambda h, t, m, u, s, z, a, d:
              f'79a59df900b949e55d96a1e698fbacedfd6e09d7eef4c6 bucket '
              f'[{_stamp(t, "%d/%b/%Y:%H:%M:%S +0000")}] {h} 79a59df900b949e55d96a1e698fbaced '
              f'3E57427F3EXAMPLE REST.GET.OBJECT key "{m} {u} HTTP/1.1" {s} - {z} {z} {d} {d} '
              f'"-" "{a}" - s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3= SigV4 '
              'ECDHE-RSA-AES128-GCM-SHA256 AuthHeader bucket.s3.us-west-1.amazonaws.com TLSv1.2',
              ""),
    "w3c": (lambda h, t, m, u, s, z, a, d:
            f'{_stamp(t, "%Y-%m-%d %H:%M:%S")} 10.0.2.10 {m} {u} - 80 - {h} '
            f'{a.replace(" ", "+")} - {s} 0 0 {d}',
            "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n"
            "#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip "
            "cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken\n"),
    "cloudfront": (lambda h, t, m, u, s, z, a, d: "\t".join([
                       _stamp(t, "%Y-%m-%d"), _stamp(t, "%H:%M:%S"), "LAX1", str(z), h, m,
                       "d111111abcdef8.cloudfront.net", u, str(s), "-",
                       a.replace(" ", "%20"), "-", "-", "Hit", "SOX4xwn4XV6Q4rgb7XiVGOHms==",
                       "d111111abcdef8.cloudfront.net", "https", "23", f"{d / 1e3:.3f}", "-",
                       "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256", "Hit", "HTTP/2.0", "-", "-",
                       "11040", f"{d / 1e3:.3f}", "Hit", "text/html", str(z), "-", "-"]),
                   "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method "
                   "cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query "
                   "cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol "
                   "cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher "
                   "x-edge-response-result-type cs-protocol-version fle-status "
                   "fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type "
                   "sc-content-type sc-content-len sc-range-start sc-range-end\n"),
    "cloudstorage": (lambda h, t, m, u, s, z, a, d:
                     f'"{int(t * 1e6)}","{h}","1","","{m}","{u}","{s}","0","{z}","{d * 1000}",'
                     f'"storage.googleapis.com","","{a}","ADPycdsUCt9kjn3AYpVO4nCt0Ww",'
                     '"GET_Object","bucket","object"',
                     '"time_micros","c_ip","c_ip_type","c_ip_region","cs_method","cs_uri",'
                     '"sc_status","cs_bytes","sc_bytes","time_taken_micros","cs_host",'
                     '"cs_referer","cs_user_agent","s_request_id","cs_operation","cs_bucket",'
                     '"cs_object"\n'),
    "squid": (lambda h, t, m, u, s, z, a, d:
              f"{t + d / 1e3:.3f} {d:6d} {h} TCP_MISS/{s} {z} {m} http://www.example.com{u} - "
              "DIRECT/198.51.100.20 text/html", ""),
    "haproxy": (lambda h, t, m, u, s, z, a, d:
                f'{_stamp(t, "%b %e %H:%M:%S")} lb haproxy[14389]: {h}:33317 '
                f'[{_stamp(t, "%d/%b/%Y:%H:%M:%S")}.000] http-in static/srv1 10/0/30/69/{d} '
                f'{s} {z} - - ---- 1/1/1/1/0 0/0 "{m} {u} HTTP/1.1"', ""),
    "traefik-clf": (lambda h, t, m, u, s, z, a, d: _combined(
        h, t, m, u, s, z, a, f' 1 "web@docker" "http://172.18.0.3:80" {d}ms'), ""),
    "nginx-timed": (lambda h, t, m, u, s, z, a, d:
                    _combined(h, t, m, u, s, z, a, f" {d / 1e3:.3f}"), ""),
    "combined-D": (lambda h, t, m, u, s, z, a, d:
                   _combined(h, t, m, u, s, z, a, f" {d * 1000}"), ""),
    "netnea-extended": (lambda h, t, m, u, s, z, a, d:
                        f'{h} US - [{_stamp(t, "%Y-%m-%d %H:%M:%S")}.{int(t * 1e6) % 1000000:06d}] '
                        f'"{m} {u} HTTP/1.1" {s} {z} "-" "{a}" "-" 52638 www.example.com '
                        '192.0.2.1 443 - - + "-" ZeZ0gH8AAQEAAHxKLdcAAAAA TLSv1.3 '
                        f'TLS_AES_256_GCM_SHA384 417 {z + 300} -% {d * 1000} 566 0 68 0-0-0-0 '
                        '0-0-0-0 0 0', ""),
    "mixed": (lambda h, t, m, u, s, z, a, d:
              _combined(h, t, m, u, s, z, a if d % 2 else None, ""), ""),
}


def rendered(nasa: bytes, layout: str, lines: int) -> bytes:
    """NASA's requests written in ``layout``, copy k moved k days later, to ``lines`` lines."""
    req, _ = parse_bytes(nasa, "common")
    line, header = RENDER[layout]
    rows = list(zip((req.hosts[h] for h in req.host), req.time.tolist(),
                    (req.methods[m] for m in req.method), (req.urls[u] for u in req.url),
                    req.status.tolist(), req.size.tolist()))
    out = [header] if header else []
    for k in range(-(-lines // len(rows))):
        out += [line(h, t + 86400 * k, m, u, s, z, AGENTS[i % 3], 3 + i % 997) + "\n"
                for i, (h, t, m, u, s, z) in enumerate(rows)]
    return "".join(out[:lines + bool(header)]).encode()


def rate(path: Path, fmt: str, runs: int = 3) -> tuple[float, int]:
    best, lines = float("inf"), 0
    for _ in range(runs):
        t0 = time.perf_counter()
        _, stats = parse_logs([str(path)], fmt)
        best = min(best, time.perf_counter() - t0)
        lines = stats.lines
    return lines / best, lines


def baseline_rate(path: Path, runs: int = 2) -> float:
    best, lines = float("inf"), 0
    for _ in range(runs):
        t0 = time.perf_counter()
        records, bad = parse_file(str(path))
        best = min(best, time.perf_counter() - t0)
        lines = len(records) + bad
    return lines / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--new-lines", type=int, default=500_000)
    args = ap.parse_args()
    nasa = gzip.decompress(NASA.read_bytes())
    with resources.as_file(resources.files("wagon.data") / "sample-combined.log.gz") as p:
        sample = gzip.decompress(Path(p).read_bytes())
    sample = b"".join(line for line in sample.splitlines(keepends=True)
                      if line.count(b'"') == 6)          # its malformed lines left aside
    logs = {
        "common": repeated(nasa, args.lines, date(1995, 8, 1), "%d/%b/%Y"),
        "combined": repeated(sample, args.lines, date(2001, 8, 1), "%d/%b/%Y"),
        "nginx-json": repeated(nasa_json(nasa), args.lines // 5, date(1995, 8, 1), "%Y-%m-%d"),
    }
    logs.update({name: rendered(nasa, name, args.new_lines) for name in RENDER})
    with tempfile.TemporaryDirectory() as tmp:
        clf = Path(tmp) / "baseline.log"
        clf.write_bytes(repeated(nasa, args.new_lines, date(1995, 8, 1), "%d/%b/%Y"))
        base = baseline_rate(clf)
        print(f"{'baseline':15s}: {base:>11,.0f} lines/s (regex per line, the same requests as "
              "Common)")
        for fmt, data in logs.items():
            path = Path(tmp) / f"{fmt}.log"
            path.write_bytes(data)
            try:
                r, n = rate(path, "auto" if fmt == "mixed" else fmt)
            except LogError as e:
                print(f"{fmt:15s}: not supported ({e})")
                continue
            print(f"{fmt:15s}: {r:>11,.0f} lines/s on {n:,} lines ({len(data) / 1e6:.0f} MB), "
                  f"{r / base:.1f}x the baseline")
            path.unlink()


if __name__ == "__main__":
    main()
