"""Parse throughput by layout, same run: Common (NASA), Combined with referers and agents (the
bundled sample), and nginx JSON lines (NASA's requests written as ``escape=json`` records).

    python bench/layouts_bench.py [--lines 1000000]

Run it with another checkout's wagon on the path for a before/after ratio; layouts that wagon
does not know are reported as such.
"""
from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from importlib import resources
from pathlib import Path

from wagon.logs.parse import LogError, parse_bytes, parse_logs

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


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


def rate(path: Path, fmt: str, runs: int = 3) -> tuple[float, int]:
    best, lines = float("inf"), 0
    for _ in range(runs):
        t0 = time.perf_counter()
        _, stats = parse_logs([str(path)], fmt)
        best = min(best, time.perf_counter() - t0)
        lines = stats.lines
    return lines / best, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
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
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, data in logs.items():
            path = Path(tmp) / f"{fmt}.log"
            path.write_bytes(data)
            try:
                r, n = rate(path, fmt)
            except LogError as e:
                print(f"{fmt:11s}: not supported ({e})")
                continue
            print(f"{fmt:11s}: {r:>11,.0f} lines/s on {n:,} lines ({len(data) / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
