"""``wagon fit`` as stages (wagon.modeling.stages): the model does not depend on how the inputs
are cut into pieces or the clients into partitions, nor on the processes that run the stages,
on 10,000 lines of the real NASA trace with a stray line (a time outlier) and an overlapping
second input (repeated lines): 28 pieces of 40 kB, as many as the property needs."""
from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from wagon.logs.parse import ParseOptions, parse_piece
from wagon.logs.pieces import MIN_SPREAD_BYTES, plan
from wagon.modeling import FitOptions, fit_logs
from wagon.modeling.processes import ProcessRunner, WorkerError
from wagon.modeling.stages import (LocalRunner, mapped_arrays, parse_stage, pieces_of,
                                   spill_arrays)

from .conftest import require_tool
from .procs import alive, children, cmdline
from .test_bad_inputs import BAD

STRAY = b'stray.example.com - - [01/Aug/2100:10:00:00 -0400] "GET /ksc.html HTTP/1.0" 200 7280\n'


@pytest.fixture(scope="module")
def inputs(nasa, tmp_path_factory) -> list[str]:
    lines = gzip.decompress(nasa.read_bytes()).splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("scale")
    first, second = folder / "a.log", folder / "b.log"
    first.write_bytes(b"".join(lines[:4_000] + [STRAY] + lines[4_000:5_000]))
    second.write_bytes(b"".join(lines[3_000:8_000]))          # 2,000 lines repeated
    return [str(first), str(second)]


@pytest.fixture(scope="module")
def spread_inputs(nasa, tmp_path_factory) -> list[str]:
    """Two plain logs of 1.6 and 1.1 MB, big enough to be cut for several workers."""
    lines = gzip.decompress(nasa.read_bytes()).splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("spread")
    first, second = folder / "a.log", folder / "b.log"
    first.write_bytes(b"".join(lines[:15_000]))
    second.write_bytes(b"".join(lines[9_000:]))
    return [str(first), str(second)]


def _model(result) -> dict:
    return {k: v for k, v in result.model.data.items() if k != "created"}


def test_pieces_own_every_line_once(inputs):
    for size in (7_919, 333_333, 1 << 30):
        pieces = plan(inputs, size)
        assert len(pieces) >= (2 if size > 1 << 20 else 3)
        results = [parse_piece(p, ParseOptions(fmt="common"), 3) for p in pieces]
        assert sum(r.stats.lines for r in results) == 5_001 + 5_000
        assert sum(len(c.requests) for r in results for c in r.chunks) == 10_001


def test_plan_spreads_plain_inputs_over_workers(spread_inputs):
    """``spread``: at least that many pieces where the bytes allow, none under 1 MiB, none
    over ``piece_bytes``; in input order."""
    inputs = spread_inputs
    sizes = [os.path.getsize(p) for p in inputs]
    assert plan(inputs, spread=1) == plan(inputs)
    assert [p.key for p in plan(inputs)] == [(0, 0), (1, 0)]
    four = plan(inputs, spread=4)
    assert [p.key for p in four] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(p.size == MIN_SPREAD_BYTES for p in four if p.stop is not None)
    assert [sum(p.size for p in four if p.index == i) for i in (0, 1)] == sizes
    assert len(plan(inputs, spread=100)) == len(four)          # 1 MiB at least
    assert len(plan(inputs, piece_bytes=500_000, spread=2)) == sum(-(-s // 500_000)
                                                                   for s in sizes)


def test_a_gzip_trailer_is_a_size_only_where_deflate_could_give_it(tmp_path):
    """The trailer of a real gzip file is its decompressed length; a damaged file's last four
    bytes are not one (b'gzip' would announce 1.9 GB and start a progress display)."""
    data = b"x" * 300_000 + os.urandom(5_000)
    good, bad = tmp_path / "good.gz", tmp_path / "bad.gz"
    good.write_bytes(gzip.compress(data))
    bad.write_bytes(BAD["bad_gzip"])
    assert [p.size for p in plan([str(good), str(bad)])] == [len(data), bad.stat().st_size]


@pytest.fixture(scope="module")
def one(inputs):
    """The model of one piece per input, one partition, in this process."""
    return fit_logs(inputs, FitOptions(), runner=LocalRunner(partitions=1))


def _same(one, other) -> None:
    assert _model(one) == _model(other)
    assert one.stats.as_dict() == other.stats.as_dict()
    assert one.sessions.counts == other.sessions.counts
    assert np.array_equal(one.sessions.session_start, other.sessions.session_start)


def test_model_identical_for_one_piece_one_partition_and_many(inputs, one):
    _same(one, fit_logs(inputs, FitOptions(),
                        runner=LocalRunner(partitions=7, piece_bytes=40_000)))
    assert one.stats.time_outliers == 1 and one.stats.duplicates == 2_000


def test_worker_processes_give_the_model_of_one_process(inputs, one, tmp_path):
    """Two forked workers parse 28 pieces of 40 kB, sessionize the partitions, fit the six
    variables and check the arrivals (seven tasks): the model of one process, progress counted
    to the end of every stage, and no spilled chunk left behind."""
    seen = {}
    runner = ProcessRunner(2, spill_dir=str(tmp_path), piece_bytes=40_000)
    spread = fit_logs(inputs, FitOptions(), runner=runner,
                      progress=lambda stage, done, total: seen.update({stage: (done, total)}))
    _same(one, spread)
    assert runner.partitions_for(sum(os.path.getsize(p) for p in inputs)) == 4
    size = sum(os.path.getsize(p) for p in inputs)
    assert seen == {"parse": (size, size), "sessionize": (4, 4), "fit": (7, 7)}
    assert not list(tmp_path.iterdir())


def test_scipy_is_loaded_once_the_sessions_are_merged(inputs):
    """No process holds SciPy (98 MB resident for ``scipy.stats`` alone) while the records are
    parsed and sessionized: the fit's peak is then its largest stage's, not SciPy's on top of
    the parse's (issue 40). Seen from ``sys.modules`` in a fresh interpreter, when the merge
    begins and after the fit."""
    code = """
import sys
import wagon.modeling as modeling
from wagon.modeling.processes import ProcessRunner
merge = modeling.merge_partitions
def watched(*args):
    print("scipy" in sys.modules)
    return merge(*args)
modeling.merge_partitions = watched
modeling.fit_logs(sys.argv[1:], runner=ProcessRunner(2, piece_bytes=400_000))
print("scipy" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code, *inputs], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_spilled_arrays_map_back_as_written(tmp_path):
    """A partition's samples as the main process gets them back: every dtype and length (an
    empty one, a strided view), readable after the file is removed."""
    arrays = {"a": np.arange(5, dtype=np.int64), "empty": np.zeros(0),
              "strided": np.linspace(0.0, 1.0, 7)[::2], "small": np.array([3, 1], np.int32)}
    path = str(tmp_path / "samples.bin")
    back = mapped_arrays(path, spill_arrays(arrays, path))
    os.remove(path)
    for name, values in arrays.items():
        assert back[name].dtype == values.dtype and np.array_equal(back[name], values), name


def test_compressed_inputs_cut_as_decompressed_give_the_plain_model(inputs, one, tmp_path):
    """A .gz of one log and an .xz of the other, cut into 40 kB pieces as they are
    decompressed (every line in exactly one piece, each spooled file removed once parsed) and
    parsed by two workers: the model and statistics of the plain files, but for the inputs'
    names; the other log as .bz2 and as .zst (by the zstd program) cut into the same bytes."""
    import bz2
    import json
    import lzma
    packed = [tmp_path / "a.log.gz", tmp_path / "b.log.xz"]
    packed[0].write_bytes(gzip.compress(open(inputs[0], "rb").read()))
    packed[1].write_bytes(lzma.compress(open(inputs[1], "rb").read()))
    spooled = tmp_path / "spool"
    spooled.mkdir()
    pieces = list(pieces_of(plan([str(packed[0])], 40_000), str(spooled)))
    assert len(pieces) > 10 and all(p.size >= 40_000 for p in pieces[:-1])
    assert b"".join(open(p.spool, "rb").read() for p in pieces) == open(inputs[0], "rb").read()
    results = [parse_stage(p, FitOptions(), 3) for p in pieces]
    assert sum(r.stats.lines for r in results) == 5_001 and not list(spooled.iterdir())
    (tmp_path / "b.log.bz2").write_bytes(bz2.compress(open(inputs[1], "rb").read()))
    subprocess.run([require_tool("zstd"), "-q", inputs[1], "-o", str(tmp_path / "b.log.zst")],
                   check=True)
    for other in (tmp_path / "b.log.bz2", tmp_path / "b.log.zst"):   # cut as .gz is, above
        cut = list(pieces_of(plan([str(other)], 40_000), str(spooled)))
        assert len(cut) > 10
        assert b"".join(open(p.spool, "rb").read() for p in cut) == open(inputs[1], "rb").read()
        for p in cut:
            os.remove(p.spool)
    runner = ProcessRunner(2, spill_dir=str(spooled), piece_bytes=40_000)
    streamed = fit_logs([str(packed[0]), str(packed[1])], FitOptions(), runner=runner)
    for key in ("variables", "arrivals", "site"):
        assert streamed.model.data[key] == one.model.data[key]
    named = json.dumps(streamed.stats.as_dict()).replace(str(packed[0]), inputs[0])
    assert json.loads(named.replace(str(packed[1]), inputs[1])) == one.stats.as_dict()
    assert np.array_equal(one.sessions.session_start, streamed.sessions.session_start)
    assert not list(spooled.iterdir())


def test_a_compressed_w3c_log_cut_as_decompressed_reads_each_piece_by_its_fields_line(tmp_path):
    """Pieces of 400 bytes of a gzipped W3C log whose #Fields: line gains sc-bytes mid-file:
    each piece read through the #Fields: line before it, as the whole plain file reads them."""
    from wagon.logs.parse import parse_logs
    first = "#Software: IIS\n#Fields: date time c-ip cs-method cs-uri-stem sc-status time-taken\n"
    second = "#Fields: date time c-ip cs-method cs-uri-stem sc-status sc-bytes time-taken\n"
    text = first + "".join(f"2024-01-01 00:{k // 60:02d}:{k % 60:02d} 10.0.0.{k % 7} GET "
                           f"/a{k % 13}.html 200 {k}\n" for k in range(60))
    text += second + "".join(f"2024-01-01 01:{k // 60:02d}:{k % 60:02d} 10.0.0.{k % 7} GET "
                             f"/b{k % 11}.html 200 {1000 + k} {k}\n" for k in range(60))
    plain, packed = tmp_path / "iis.log", tmp_path / "iis.log.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    pieces = list(pieces_of(plan([str(packed)], 400), str(tmp_path)))
    assert len(pieces) >= 10
    whole, _ = parse_logs([str(plain)])
    assert sorted(set(whole.size.tolist()))[-1] == 1059
    parts = [parse_stage(p, FitOptions(), 1).chunks[0].requests for p in pieces]
    ours = sorted((r.urls[u], s) for r in parts for u, s in zip(r.url.tolist(), r.size.tolist()))
    assert ours == sorted(zip((whole.urls[u] for u in whole.url), whole.size.tolist()))


def _killed(_: int) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_an_error_in_a_worker_is_raised_here(inputs, tmp_path):
    from wagon.logs.parse import LogError
    with pytest.raises(LogError, match="missing.log: No such file"):
        fit_logs([inputs[0], str(tmp_path / "missing.log")],
                 runner=ProcessRunner(2, piece_bytes=40_000))


def test_standard_input_is_read_here_beside_the_workers(inputs, one, tmp_path):
    """Workers have no standard input: '-' is parsed by this process while they parse the
    files; the model is the one of the same bytes given as files."""
    from click.testing import CliRunner

    from wagon.cli import main
    out = tmp_path / "model.json"
    with open(inputs[1], "rb") as f:
        r = CliRunner().invoke(main, ["fit", inputs[0], "-", "--workers", "2", "-o", str(out),
                                      "--json"], input=f.read())
    assert r.exit_code == 0, r.output
    from wagon.formats.model import load_model
    model = load_model(str(out)).data
    assert model["provenance"]["inputs"][1]["name"] == "<stdin>"
    assert model["variables"] == _model(one)["variables"]
    assert model["site"] == _model(one)["site"]


def test_workers_and_cluster_exclude_each_other(inputs):
    from click.testing import CliRunner

    from wagon.cli import main
    r = CliRunner().invoke(main, ["fit", inputs[0], "--workers", "2", "--cluster", "local:2"])
    assert r.exit_code == 2 and "give --workers or --cluster, not both" in r.output


def test_a_worker_that_dies_is_one_error():
    with pytest.raises(WorkerError, match="a worker process died during the fit stage"):
        ProcessRunner(2).map(_killed, [1, 2, 3], "fit", None)


def test_statistics_on_distinct_values_with_counts_equal_those_on_every_value():
    """W², A² (continuous and normal), the λ² bins and the likelihood from (value, count) pairs
    equal the formulas of every value one by one (values with many ties, as think times)."""
    from scipy import stats

    from wagon.fitting import gof
    from wagon.fitting.laws import Sample
    rng = np.random.default_rng(3)
    x = np.sort(np.round(rng.lognormal(3, 1, 5_000)))
    law = stats.lognorm(1.1, scale=np.exp(3))
    s = Sample(x)
    assert len(s.v) < len(x) / 5 and s.n == len(x)
    for ours, theirs in ((gof.cvm_ad(s.v, law, s.w), gof.cvm_ad(x, law)),
                         (gof.normal_cvm_ad((s.v - 20) / 9, s.w), gof.normal_cvm_ad((x - 20) / 9))):
        assert ours == pytest.approx(theirs, rel=1e-9)
    edges = gof.bin_edges(s)
    b = gof.n_bins(len(x))
    expected = np.unique(x[(np.arange(1, b) * len(x)) // b])
    assert np.array_equal(edges, expected[expected > x[0]])
    assert np.array_equal(gof.observed(s, edges),
                          np.diff(np.r_[0, np.searchsorted(x, edges), len(x)]))
    assert s.mean == pytest.approx(x.mean(), rel=1e-12)
    assert s.log_std == pytest.approx(np.log(x).std(), rel=1e-12)


@pytest.mark.parametrize("law, params", [("lomax", {"shape": 2.5, "scale": 40.0}),
                                         ("weibull", {"shape": 0.7, "scale": 30.0}),
                                         ("gamma", {"shape": 2.0, "scale": 5.0})])
def test_asymptotic_p_values_as_with_every_eigenvalue(law, params):
    """The p-values skip the eigenvalue problem where Chernoff's bound from the kernel's trace
    and norm already puts them below 1e-11; they equal those of every eigenvalue (the
    previous computation), on samples that fit and samples that do not."""
    from wagon.fitting import gof
    from wagon.fitting.laws import LAWS
    from wagon.fitting.likelihood import law_null_kernel
    kernel = law_null_kernel(LAWS[law], params)
    h, psi, info, w_w2, w_a2 = kernel
    for w2, a2 in ((0.05, 0.4), (0.3, 2.5), (2.0, 12.0), (40.0, 250.0), (900.0, 1e4)):
        old = (gof.weighted_chi2_sf(w2, gof.edf_eigenvalues(h, psi, info, w_w2)),
               gof.weighted_chi2_sf(a2, gof.edf_eigenvalues(h, psi, info, w_a2)))
        assert gof.asymptotic_p(w2, a2, *kernel) == pytest.approx(old, abs=1e-12)
    assert gof.far_tail(250.0, gof.edf_kernel(h, psi, info, w_a2))
    assert not gof.far_tail(2.5, gof.edf_kernel(h, psi, info, w_a2))


def test_fit_progress_follows_the_stages_in_decompressed_bytes(inputs, monkeypatch, tmp_path):
    """A .gz of some 60 kB holding 545 kB of log: progress is measured (and its threshold
    taken) on the decompressed bytes, through parsing, sessions and fitting; plain lines off a
    terminal."""
    import wagon.cli.fit as fit_cli
    from click.testing import CliRunner

    from wagon.cli import main
    log = tmp_path / "a.log.gz"
    log.write_bytes(gzip.compress(open(inputs[0], "rb").read()))
    monkeypatch.setattr(fit_cli, "PROGRESS_MIN_BYTES", 200_000)
    r = CliRunner().invoke(main, ["fit", str(log), "-o", "model.json"])
    assert r.exit_code == 0, r.output
    size = os.path.getsize(inputs[0])
    assert log.stat().st_size < 200_000 < size
    assert f"wagon: parsing 100% ({size:,}/{size:,})" in r.stderr
    assert re.search(r"wagon: sessions 100% \((\d+)/\1\)", r.stderr)
    assert "wagon: fitting 100% (7/7)" in r.stderr          # six variables, the arrivals
    small = tmp_path / "small.log.gz"                  # 1,200 lines: 130 kB decompressed
    small.write_bytes(gzip.compress(b"".join(open(inputs[0], "rb").readlines()[:1_200])))
    assert len(gzip.decompress(small.read_bytes())) < 200_000
    quiet = CliRunner().invoke(main, ["fit", str(small), "-o", "model.json"])
    assert quiet.exit_code == 0 and "wagon: parsing" not in quiet.stderr, quiet.output


def test_bootstrap_chunks_give_the_same_p_values_in_any_order():
    """The bootstrap's chunks carry their own seeds: run in reverse order (as parallel workers
    may finish), they give the p-values and percentile intervals of the serial run."""
    from wagon.fitting import fit
    from wagon.fitting.report import apply_bootstrap, bootstrap_tasks, run_bootstrap
    x = np.random.default_rng(8).weibull(0.8, 400) * 30
    serial = fit(x, candidates=["weibull", "gamma"], bootstrap=60, seed=4)
    again = fit(x, candidates=["weibull", "gamma"])
    tasks = bootstrap_tasks(again, 60, seed=4)
    assert len(tasks) == 2 * 3 and sum(t.replicates for t in tasks) == 120
    results = {id(t): run_bootstrap(t) for t in reversed(tasks)}
    apply_bootstrap(again, tasks, [results[id(t)] for t in tasks])
    assert [(c.p_a2, c.p_w2, c.p_method) for c in again.candidates] == \
        [(c.p_a2, c.p_w2, c.p_method) for c in serial.candidates]
    assert [c.conf_int(bootstrap=True) for c in again.candidates] == \
        [c.conf_int(bootstrap=True) for c in serial.candidates]
    assert serial.candidates[0].p_method == "bootstrap(60)"


def test_combined_log_with_agents_and_referers_identical_partitioned(sample, tmp_path):
    """A combined log (the sample's first 8,000 lines: referers, agents) with the host+agent
    identity and kept paths and queries: the same model from one partition and from 5
    partitions of 100 kB pieces."""
    from wagon.logs.sessions import SessionRules
    log = tmp_path / "sample.log"
    log.write_bytes(b"".join(gzip.decompress(sample.read_bytes()).splitlines(True)[:8_000]))
    options = FitOptions(keep_paths=True, keep_query=True,
                         rules=SessionRules(identity="host+agent"))
    one = fit_logs([str(log)], options, runner=LocalRunner(partitions=1))
    many = fit_logs([str(log)], options, runner=LocalRunner(partitions=5, piece_bytes=100_000))
    assert _model(one) == _model(many)
    assert one.sessions.counts["clients"] > 300 and len(one.model.data["site"]["pages"]) > 50


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_fit_run_again_reuses_the_kept_heap():
    """With the heap settings ``wagon fit`` runs with, a grid fit (whole-second gaps, some of
    hours: 20,000 single cells) run a second time reuses the memory the first freed; with
    glibc's defaults it faults tens of thousands of pages in again. Each in a process of its
    own (page faults counted by getrusage)."""
    code = """
import resource, sys
import numpy as np
from wagon.fitting import Observation, fit
from wagon.modeling.allocator import keep_freed_memory
if sys.argv[1] == "keep":
    keep_freed_memory()
rng = np.random.default_rng(3)
x = np.round(rng.exponential(10.0, 100_000))
x[:40] = np.round(rng.uniform(20_000, 50_000, 40))
def run():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fit(x, observation=Observation.grid(1.0, lower=0.0), name="gaps")
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
run()
print(run())
"""
    faults = {how: int(subprocess.run([sys.executable, "-c", code, how], capture_output=True,
                                      text=True, check=True).stdout)
              for how in ("keep", "default")}
    assert faults["keep"] < 1_000 and faults["default"] > 10_000, faults


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_fit_takes_its_workers_and_spilled_chunks_with_it(inputs, tmp_path, sig):
    """``wagon fit --workers 2 A B -``: the workers parse A and B into the spill folder while
    the parent waits for standard input (held open here). Killed then, by ``sig``: within 10 s
    its workers are gone (seen in /proc) and the temporary directory is empty."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "wagon", "fit", *inputs, "-", "--workers",
                             "2", "-o", str(tmp_path / "m.json")], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(scratch.glob("wagon-fit-*/*.pickle")):
        time.sleep(0.05)
    workers = [k for k in children(proc.pid) if cmdline(k) == cmdline(proc.pid)]   # forked
    assert len(workers) == 2 and list(scratch.glob("wagon-fit-*/*.pickle"))
    proc.send_signal(sig)
    proc.wait(10)
    while time.monotonic() < deadline and (any(map(alive, workers)) or list(scratch.iterdir())):
        time.sleep(0.05)
    proc.stdin.close()
    assert not any(map(alive, workers)) and not list(scratch.iterdir())
