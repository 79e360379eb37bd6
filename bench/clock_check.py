"""Is a log's clock a clock? Read with a regex here (not wagon's parser): how often its lines go
back in time inside a minute and across minutes, which minutes of the hour hold its lines, and
whether its requests per hour vary as independent users make them vary.

For independent users, the requests N of an hour sum the requests r of its clients: with a
Poisson number of clients Var N / E N = E[r²] / E[r], with a fixed number Var(r) / E[r] —
either way at least about the clients' own burstiness. A log whose hourly counts vary less
than that (an index of dispersion below Var(r) / E[r], let alone below 1, while its clients
bring tens of requests an hour) was cut by a count, not by a clock.

    python bench/clock_check.py LOG [LOG ...]
"""
from __future__ import annotations

import argparse
import gzip
import re
from datetime import datetime
from pathlib import Path

import numpy as np

LINE = re.compile(rb"^(\S+) \S+ \S+ \[(\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d(?:\.\d+)? [+-]\d{4})\]")


def read(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(epoch seconds, client address) of each line that has a CLF stamp (with or without a
    fraction of a second: netnea's), in file order."""
    data = path.read_bytes()
    data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    t, host = [], []
    for line in data.splitlines():
        m = LINE.match(line)
        stamp = m and m.group(2).decode()
        try:
            when = datetime.strptime(stamp, "%d/%b/%Y:%H:%M:%S.%f %z" if "." in stamp
                                     else "%d/%b/%Y:%H:%M:%S %z") if m else None
        except ValueError:                           # a line dated nowhere
            when = None
        if when is not None:
            host.append(m.group(1))
            t.append(when.timestamp())
    return np.array(t), np.array(host)


def check(path: Path) -> str:
    t, host = read(path)
    if len(t) < 2:
        return f"{path.name}: {len(t)} lines with a CLF stamp: nothing to tell"
    same = np.floor(t[1:] / 60) == np.floor(t[:-1] / 60)
    back = np.diff(t) < 0
    by = -np.diff(t)[back & same].mean() if (back & same).any() else 0.0
    minutes = np.unique(np.floor(t % 3600 / 60)).size
    hour = np.floor(t / 3600).astype(np.int64)
    _, n = np.unique(hour, return_counts=True)
    _, codes = np.unique(host, return_inverse=True)
    _, r = np.unique(codes.astype(np.int64) * (hour.max() + 1) + hour, return_counts=True)
    return (f"{path.name}: {len(t):,} lines; going back in time: {100 * back[same].mean():.1f} % "
            f"of consecutive lines inside a minute (by {by:.1f} s "
            f"on average), {100 * np.mean(back[~same]) if (~same).any() else 0:.2f} % across minutes; "
            f"{minutes} distinct minutes of the hour; requests per hour {n.min()}–{n.max()}, "
            f"mean {n.mean():.1f}, index of dispersion {n.var() / n.mean():.2f} over {len(n)} "
            f"hours; a client's requests in an hour: mean {r.mean():.2f}, max {r.max()}, "
            f"E[r²]/E[r] {np.mean(r ** 2) / r.mean():.1f}, Var(r)/E[r] {r.var() / r.mean():.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", type=Path)
    for path in ap.parse_args().logs:
        print(check(path))


if __name__ == "__main__":
    main()
