"""Two logs are compared on one clock: a log stamped to the millisecond, compared with the
same requests as a server stamping whole seconds logs them, is read as that server logged it
— its sessions, clicks and pages rebuilt on whole seconds — where read on its own clock its
clicks are others (Tmin on exact times against floored ones). The whole-second log is written
here from the fine one by the test itself (a floor and strftime), not by wagon."""
from __future__ import annotations

import gzip
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.analysis.compare import compare
from wagon.analysis.logdigest import load_digest, load_digests
from wagon.analysis.options import CompareOptions
from wagon.analysis.workload import load_workload, on_one_clock
from wagon.cli import main

DATA = Path(__file__).parent / "data"
CLF = re.compile(r"^(\S+ \S+ \S+) \[([^\]]+)\] (.*)$")
LINES = 6000
SHIFT = 30 * 365.25 * 86400      # 1995 to 2025: nginx's $msec has ten digits of seconds


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path]:
    """NASA's first hours, thirty years on, as a millisecond-stamping nginx might have logged
    them (combined, then ``$msec``: each second's lines spread in order over it, seeded), and
    as one stamping whole seconds logs the same requests (the floor of each time, CLF's
    stamp)."""
    d = tmp_path_factory.mktemp("clock")
    with gzip.open(DATA / "nasa-aug95-morning.log.gz", "rt", encoding="latin-1") as f:
        lines = [next(f).rstrip("\n") for _ in range(LINES)]
    parsed = [CLF.match(line) for line in lines]
    parsed = [m for m in parsed if m and m.group(3).count('"') == 2]      # a clean request
    seconds = np.array([datetime.strptime(m.group(2), "%d/%b/%Y:%H:%M:%S %z").timestamp()
                        for m in parsed])
    rng = np.random.default_rng(5)
    group = np.cumsum(np.r_[True, seconds[1:] != seconds[:-1]]) - 1
    frac = np.concatenate([np.sort(rng.random(k)) for k in np.bincount(group)])   # in order
    t = np.floor((seconds + SHIFT + frac) * 1000) / 1000
    fine, coarse = d / "fine.log", d / "coarse.log"
    with open(fine, "w") as f_fine, open(coarse, "w") as f_coarse:
        for m, u in zip(parsed, t.tolist()):
            stamp = datetime.fromtimestamp(int(u), timezone.utc).strftime("%d/%b/%Y:%H:%M:%S +0000")
            head = f'{m.group(1)} [{stamp}] {m.group(3)} "-" "Mozilla/4.0"'
            f_fine.write(f"{head} {u:.3f}\n")
            f_coarse.write(f"{head}\n")
    return fine, coarse


def test_a_fine_log_is_read_on_the_coarse_ones_clock(logs):
    """Every row's A is B's own reading of the whole-second log: the same sessions, clicks,
    think times and pages; read on its own millisecond clock, the fine log's are others."""
    fine, coarse = logs
    a, b = load_digests([str(fine)], [str(coarse)])
    assert a.stamps == pytest.approx(0.001) and a.resolution == 1.0 and b.stamps is None
    rows = compare(a, b, CompareOptions())
    assert all(r["a"] == r["b"] for r in rows), [(r["row"], r["a"], r["b"]) for r in rows]
    own = compare(load_digest([str(fine)]), b, CompareOptions())
    changed = [r["row"] for r, o in zip(rows, own) if r["a"] != o["a"]]
    assert "clicks per session" in changed or "think time (s)" in changed, changed
    assert sum(load_digest([str(fine)]).page_hits) != sum(b.page_hits)


def test_the_report_reads_them_on_one_clock_too(logs):
    """``wagon report --compare``'s workloads: the fine log's clicks are the coarse one's."""
    fine, coarse = logs
    a, b = on_one_clock(lambda paths, clock: load_workload(paths, clock=clock),
                        [str(fine)], [str(coarse)])
    assert a.stamps == pytest.approx(0.001) and a.resolution == 1.0
    assert np.array_equal(a.clicks, b.clicks) and np.array_equal(a.think, b.think)
    assert np.array_equal(np.sort(a.page_hits), np.sort(b.page_hits))


def test_compare_says_which_log_it_read_on_the_others_clock(logs):
    fine, coarse = logs
    r = CliRunner().invoke(main, ["compare", str(coarse), str(fine)])
    assert r.exit_code == 0, r.output
    said = [line for line in r.output.splitlines() if line.startswith("B: stamped every")]
    assert said and "0.001 s, read on the other log's clock of 1 s" in said[0], r.output
