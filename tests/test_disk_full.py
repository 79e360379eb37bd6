"""A full disk: wagon's files appear complete or not at all, and running out of room is exit
status 6 with one line, apart from bad input (2). The observer is the file system: the file
that was there before is byte for byte unchanged, and no temporary file is left. The disk is
made full for the process alone by its file-size limit (RLIMIT_FSIZE: a write past it fails
with EFBIG, as one on a full disk fails with ENOSPC)."""
from __future__ import annotations

import resource
import signal
import subprocess
import sys

import pytest

from .test_synth import model_and_scenario

OLD = b"what was there before\n"


def _run(args: list[str], cwd, limit: int) -> subprocess.CompletedProcess:
    """``wagon ARGS`` in ``cwd`` with files limited to ``limit`` bytes."""
    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)        # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([sys.executable, "-m", "wagon", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, preexec_fn=limited)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("full")
    model_and_scenario(d, sessions=3000, pages=20)
    return d


#: a command whose output (OUT) is far bigger than the limit, in bytes
CASES = {"synth": (["synth", "{d}/m.json", "--sessions", "3000", "-o", "OUT"], 50_000),
         "fit": (["fit", "{sample}", "-o", "OUT", "--workers", "1"], 2_000),
         "report": (["report", "{d}/m.json", "-o", "OUT"], 20_000),
         "export": (["export", "{d}/s.jsonl", "--to", "clf", "-o", "OUT"], 50_000)}


@pytest.mark.parametrize("name", list(CASES))
def test_a_full_disk_leaves_the_old_file_and_exits_6(tmp_path, inputs, sample, name):
    args, limit = CASES[name]
    out = tmp_path / "out"
    out.write_bytes(OLD)
    r = _run([a.format(d=inputs, sample=sample).replace("OUT", str(out)) for a in args],
             tmp_path, limit)
    assert r.returncode == 6, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "the disk is full" in lines[0] and "Traceback" not in r.stderr
    assert out.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_replay_that_fills_the_disk_exits_6_and_leaves_what_recover_completes(tmp_path):
    """The results outgrow the disk mid-run (300 sessions of two clicks, files limited to
    8 kB): exit 6 and one line saying where the rows are kept and how to finish them, not 2
    (bad input); the results file that was there is unchanged (no half results.csv), the rows
    sit in the part file; ``wagon recover`` on the still full disk exits 6 (it said 2), with
    room again publishes, saying the disk stopped the run (it said parent_died), results whose every
    session has its two requests, counted as the summary counts them, and no part is left."""
    from wagon import read_results
    from .servers import write_scenario_file
    from .test_replay import wagon_serve
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/index.html", 100, [])], [],
                                   ["lan/http11"],
                                   [(0.01 * i, 0, [(0, 0.0), (0, 0.5)]) for i in range(300)])
    results = tmp_path / "r.csv"
    results.write_bytes(OLD)
    with wagon_serve(tmp_path) as (port, _):
        r = _run(["replay", str(scenario), "--target", f"http://127.0.0.1:{port}/",
                  "--results", str(results), "--quiet"], tmp_path, 8_000)
    assert r.returncode == 6, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "the disk is full" in lines[0] and "rows written" in lines[0]
    assert f"wagon recover {results}" in lines[0] and "Traceback" not in r.stderr
    assert results.read_bytes() == OLD and not (tmp_path / "r.run.json").exists()
    assert (tmp_path / "r.csv.part0").stat().st_size > 1000      # it had begun: mid-run
    full = _run(["recover", str(results)], tmp_path, 8_000)         # the disk still full
    assert full.returncode == 6 and len(full.stderr.strip().splitlines()) == 1, full.stderr
    assert "the disk is full" in full.stderr and results.read_bytes() == OLD
    again = _run(["recover", str(results)], tmp_path, 1 << 30)
    assert again.returncode == 5, again.stderr                  # complete: no
    got = read_results(results)
    summary = got.attrs["run"]["summary"]
    assert summary["stopped_by"] == "disk_full" and "the disk filled up" in again.stdout
    assert len(got) == summary["requests"]["total"] > 0 and summary["complete"] is False
    assert (got.groupby("session").size() == 2).all()
    assert not list(tmp_path.glob("r*.part*"))
