"""``wagon compare`` reads a log as ``wagon fit`` does (pieces, partitions of the clients) and
keeps tallies, not records: the same table as the log read whole; the tallies' exact sums
against Python's exact arithmetic; the wavelet's levels against PyWavelets' own transform."""
from __future__ import annotations

import gzip
import statistics
from fractions import Fraction

import numpy as np
import pywt
import pytest

from wagon.analysis.compare import _mean_se, compare
from wagon.analysis.digest import _acf1
from wagon.analysis.logdigest import log_digest
from wagon.analysis.selfsim import _detail_energies
from wagon.analysis.workload import load_workload
from wagon.formats.strict_json import dumps
from wagon.synth import Generator, SynthOptions, synthesize


def test_a_log_cut_into_pieces_and_partitions_compares_as_read_whole(tmp_path, nasa):
    """Two inputs that overlap by 1,000 lines (repeated lines of the second are left out) and a
    line dated 2031 (a time outlier), cut into 256 kB pieces and 3 partitions: the table is
    the one of the logs parsed whole, and the requests counted are the text's distinct
    lines."""
    lines = gzip.decompress(nasa.read_bytes()).splitlines(keepends=True)
    first, second = tmp_path / "a.log", tmp_path / "b.log"
    stray = lines[5].replace(b"/Aug/1995:", b"/Aug/2031:")
    first.write_bytes(b"".join(lines[:15_000] + [stray]))
    second.write_bytes(b"".join(lines[14_000:]))
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(None, SynthOptions(sessions=300, seed=1, rate=1.0)), f)
    other = load_workload(str(scenario))
    paths = [str(first), str(second)]
    streamed = log_digest(paths, partitions=3, piece_bytes=256 << 10)
    assert streamed.requests == len(lines)
    # and it says what it left out: the stray line and the second input's first 1,000
    assert (streamed.read.time_outliers, streamed.read.duplicates) == (1, 1_000)
    assert streamed.read.summary_lines()[-1] == ("left out: 1 time outliers, 1,000 lines "
                                                 "repeated from an earlier input")
    assert dumps(compare(streamed, other)) == dumps(compare(load_workload(paths), other))


def test_the_correlation_at_lag_one_is_exact():
    """Against Pearson's r from Python's integers (and NumPy's, to its rounding); a series
    constant but for its first second has no correlation to give."""
    p = np.random.default_rng(4).poisson(7, 5000).astype(float)
    x, y = [int(v) for v in p[:-1]], [int(v) for v in p[1:]]
    n = len(x)
    num = n * sum(a * b for a, b in zip(x, y)) - sum(x) * sum(y)
    den = (n * sum(a * a for a in x) - sum(x) ** 2) * (n * sum(b * b for b in y) - sum(y) ** 2)
    r, se = _acf1(p)
    assert r == pytest.approx(num / den ** 0.5, rel=1e-15)
    assert r == pytest.approx(np.corrcoef(p[:-1], p[1:])[0, 1], rel=1e-12)
    assert se == pytest.approx(1 / np.sqrt(len(p)), rel=0.25)   # independent seconds
    assert "same number of requests" in _acf1(np.r_[9.0, np.ones(10)])


def test_the_mean_transfer_size_and_its_error_are_exact():
    """Against Python's statistics (exact fractions, correctly rounded) on sizes near 2³¹,
    whose squares overflow 64-bit sums."""
    sizes = np.random.default_rng(5).integers(2 ** 31 - 1000, 2 ** 31, 20_000)
    values, counts = np.unique(sizes, return_counts=True)
    mean, se = _mean_se(values, counts)
    assert mean == statistics.mean(sizes.tolist())
    exact = statistics.stdev(Fraction(int(s)) for s in sizes) / np.sqrt(len(sizes))
    assert se == pytest.approx(float(exact), rel=1e-15)


def test_wavelet_levels_are_pywavelets_transform():
    """The detail energies, level by level, equal those of ``pywt.wavedec``'s coefficients."""
    x = np.random.default_rng(6).poisson(3, 10_007).astype(float)
    levels = pywt.dwt_max_level(len(x), pywt.Wavelet("db3").dec_len)
    details = pywt.wavedec(x, "db3", level=levels, mode="periodization")[1:][::-1]
    want = [(len(d), float(np.mean(d ** 2))) for d in details if len(d) >= 8]
    assert _detail_energies(x) == want


def test_compare_says_what_it_left_out_of_a_log(tmp_path, sample):
    """Malformed lines are counted and said (stderr, as wagon fit says them, and --json), not
    dropped in silence: the count is the lines an independent regex of the combined layout
    refuses, with three broken lines added to one side."""
    import json
    import re

    from click.testing import CliRunner

    from wagon.cli import main
    text = gzip.decompress(sample.read_bytes()).decode("latin-1").splitlines()
    broken = ["garbage", 'x - - [bad date] "GET / HTTP/1.1" 200 5', "\t"]
    (tmp_path / "a.log").write_text("\n".join(text) + "\n", encoding="latin-1")
    (tmp_path / "b.log").write_text("\n".join(text[:50] + broken + text[50:]) + "\n",
                                    encoding="latin-1")
    months = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
    combined = re.compile(r'^\S+ \S+ \S+ \[(0[1-9]|[12]\d|3[01])/(' + months + r')/\d{4}:'
                          r'\d\d:\d\d:\d\d [+-]\d{4}\] '
                          r'"[A-Z]+ \S+( HTTP/\d\.\d)?" \d{3} (\d+|-)( "[^"]*" "[^"]*")?$')
    refused = sum(not combined.match(line) for line in text)
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "a.log"), str(tmp_path / "b.log"),
                                  "--json"])
    assert r.exit_code == 0, r.output
    said = json.loads(r.stdout)["read"]
    assert said["a"]["malformed"] == refused > 0
    assert said["b"]["malformed"] == refused + len(broken)
    assert said["b"]["lines"] == len(text) + len(broken)
    assert f"B: lines {len(text) + len(broken):,}" in r.stderr


def test_a_url_that_is_a_page_and_an_object_is_one_url_as_in_its_exported_log(tmp_path):
    """A site may list a URL both as a page and as an object (an image clicked, and embedded):
    the scenario's requests name it once, as the CLF log ``wagon export`` writes of it does
    (counted here from the log's own request lines)."""
    from click.testing import CliRunner

    from wagon.cli import main

    from .servers import write_scenario_file
    scenario = write_scenario_file(
        tmp_path / "s.jsonl", [("/a.html", 100, [0, 1]), ("/pic.gif", 50, [])],
        [("/pic.gif", 50), ("/style.css", 20)], ["lan/http11"],
        [(float(i), 0, [(0, 0.0), (1, 2.0)]) for i in range(40)])
    r = CliRunner().invoke(main, ["export", str(scenario), "--to", "clf", "-o",
                                  str(tmp_path / "s.log")])
    assert r.exit_code == 0, r.output
    logged = [line.split('"')[1].split()[1] for line in
              (tmp_path / "s.log").read_text().splitlines()]
    w = load_workload(str(scenario))
    assert len(w.url) == len(logged)
    assert len(np.unique(w.url)) == len(set(logged)) == 3      # codes, as the rows count URLs
    assert sorted(np.array(w.urls, object)[w.url]) == sorted(logged)


def test_the_zipf_bootstrap_in_blocks_is_the_bootstrap_at_once(monkeypatch):
    """The resamples are drawn a block at a time (memory bound by the block, not 200 × the
    URLs: 1.4 GB at 300,000 URLs before) and give the same slope and error to the bit as all
    at once, whatever the block."""
    import wagon.analysis.compare as cmp
    hits = np.sort(np.random.default_rng(3).zipf(1.3, 20_000))[::-1].astype(np.int64)
    monkeypatch.setattr(cmp, "ZIPF_BLOCK_VALUES", 1 << 40)
    whole = cmp._zipf_slope(hits)
    for block in (20_000, 20_000 * 7, 20_000 * 64 + 1):
        monkeypatch.setattr(cmp, "ZIPF_BLOCK_VALUES", block)
        assert cmp._zipf_slope(hits) == whole
