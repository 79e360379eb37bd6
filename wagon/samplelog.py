"""A synthetic Combined-format access log drawn from known laws (the bundled sample, test input).

Sessions arrive as a Poisson process; each has N = max(1, round(IG(μ=5, λ=3))) clicks with
lognormal(μ=3, σ=1.1) think times between them (WAGON's generator laws); pages are drawn by a
Zipf(1.0) popularity over a small site whose pages embed 0–6 images fetched within a second of the
page. A robot that fetches /robots.txt and a few malformed lines are mixed in, as in real logs.

    python -m wagon.samplelog data/sample-combined.log.gz [--hours 1] [--rate 0.25] [--seed 1]
"""
from __future__ import annotations

import argparse
import gzip
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np

from .synth.export import clf_timestamp

__all__ = ["SampleLaws", "generate_lines", "write_sample"]

AGENTS = ("Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)", "Mozilla/4.76 [en] (X11; U; Linux)",
          "Mozilla/5.0 (Macintosh; PPC Mac OS X; en-US)", "Opera/6.0 (Windows 2000; U) [en]")
MALFORMED = (b"bad line without fields", b"",
             b'10.0.0.1 - - [99/Xyz/2001:00:00:00 +0000] "GET / HTTP/1.0" 200 1 "-" "x"',
             b'10.0.0.2 - - [01/Aug/2001:00:00:00 +0100] "GET /x HTTP/1.0" 2OO 5 "-" "x"',
             b'10.0.0.3 - - [01/Aug/2001:00:00:00 +0100] "GET" 200 5 "-" "x"')


@dataclass(frozen=True)
class SampleLaws:
    """The laws the sample is drawn from (the oracle the fit is checked against)."""

    rate: float = 0.25                   # sessions per second
    clicks_mu: float = 5.0               # inverse Gaussian mean
    clicks_lambda: float = 3.0           # inverse Gaussian shape
    think_mu: float = 3.0                # lognormal: mean of log think time (s)
    think_sigma: float = 1.1
    pages: int = 60
    zipf_a: float = 1.0


def _site(rng: np.random.Generator, laws: SampleLaws) -> list[tuple[str, int, list[tuple[str, int]]]]:
    """Pages as (url, html size, [(image url, size)])."""
    images = [(f"/images/img{i:02d}.gif", int(rng.lognormal(8.0, 1.0))) for i in range(40)]
    site = []
    for p in range(laws.pages):
        url = "/" if p == 0 else f"/section{p % 7}/page{p:03d}.html"
        k = int(rng.integers(0, 7))
        embedded = [images[j] for j in rng.choice(len(images), size=k, replace=False)]
        site.append((url, int(rng.lognormal(8.5, 0.9)), embedded))
    return site


def generate_lines(hours: float = 1.0, laws: SampleLaws = SampleLaws(), seed: int = 1,
                   start: datetime = datetime(2001, 8, 1, 9, 0, 0, tzinfo=timezone(timedelta(hours=1)))
                   ) -> list[bytes]:
    """Log lines (without newlines), sorted by time, malformed ones included."""
    rng = np.random.default_rng(seed)
    site = _site(rng, laws)
    weights = 1.0 / np.arange(1, len(site) + 1) ** laws.zipf_a
    weights /= weights.sum()
    horizon = hours * 3600.0
    t = rng.exponential(1 / laws.rate)
    events: list[tuple[float, bytes]] = []
    client = 0
    while t < horizon:
        client += 1
        host = f"client{client:05d}.example.net"
        agent = AGENTS[client % len(AGENTS)]
        clicks = max(1, int(round(rng.wald(laws.clicks_mu, laws.clicks_lambda))))
        now = t
        for _ in range(clicks):
            url, size, embedded = site[rng.choice(len(site), p=weights)]
            events.append((now, _line(start, now, host, url, size, "-", agent)))
            last = now
            for img, isize in embedded:
                last = last + rng.uniform(0.05, 0.3)
                events.append((last, _line(start, last, host, img, isize, url, agent)))
            now = last + rng.lognormal(laws.think_mu, laws.think_sigma)
        t += rng.exponential(1 / laws.rate)
    for k in range(3):                                   # a robot
        when = horizon * (k + 1) / 4
        events.append((when, _line(start, when, "crawler.example.org", "/robots.txt", 68, "-",
                                   "ExampleBot/1.0 (+http://example.org/bot)")))
    for k, bad in enumerate(MALFORMED):
        events.append((horizon * (k + 0.5) / len(MALFORMED), bad))
    events.sort(key=lambda e: e[0])
    return [line for _, line in events]


def _line(start: datetime, offset: float, host: str, url: str, size: int, referer: str,
          agent: str) -> bytes:
    zone = start.utcoffset()
    stamp = clf_timestamp(start.timestamp() + int(offset),
                          int(zone.total_seconds() // 60) if zone else 0)
    ref = referer if referer == "-" else f"http://www.example.net{referer}"
    return (f'{host} - - [{stamp}] "GET {url} HTTP/1.0" 200 {size} "{ref}" "{agent}"').encode()


def write_sample(path: str, hours: float = 1.0, laws: SampleLaws = SampleLaws(),
                 seed: int = 1) -> int:
    """Write the sample (gzip when the name ends in .gz); returns the number of lines."""
    lines = generate_lines(hours, laws, seed)
    data = b"\n".join(lines) + b"\n"
    with open(path, "wb") as out:
        if path.endswith(".gz"):       # no name, mtime 0: the same bytes wherever it is written
            with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as f:
                f.write(data)
        else:
            out.write(data)
    return len(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description="Write wagon's synthetic sample access log.")
    ap.add_argument("path")
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--rate", type=float, default=SampleLaws.rate)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = write_sample(args.path, args.hours, SampleLaws(rate=args.rate), args.seed)
    print(f"{args.path}: {n} lines")


if __name__ == "__main__":
    main()
