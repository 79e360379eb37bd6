"""The README's first command, ``wagon demo`` (shortened here), from a non-editable install of
the checkout in a fresh virtual environment (one run: the installed code is the checkout's)."""
from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sysconfig
import sys
from pathlib import Path

import numpy as np
import pytest

from wagon import read_results, read_scenario
from wagon.demo import steady_state

ROOT = Path(__file__).resolve().parent.parent
# 1 s of arrivals (~6 sessions of 3 classes, ~70 requests) and 1 s of drain: every stage runs
SHORT = ["--duration", "20", "--speedup", "20", "--drain", "1"]


def check_demo_output(out: Path, stdout: str) -> None:
    assert "1/4 fit" in stdout and "4/4 replay" in stdout and "demo done" in stdout
    assert "errors none" in stdout, stdout
    assert "no steady state: 1 s of arrivals held only the ramp" in stdout, stdout
    assert "WARNING" not in stdout, stdout
    for name in ("model.json", "scenario.jsonl", "results.csv", "results.pages.csv",
                 "results.run.json", "report.html", "plots/replay.png", "plots/think.png"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "model.json").read_text())["format"] == "wagon-model"
    classes = {c.name for c in read_scenario(out / "scenario.jsonl").classes}
    rows = read_results(out / "results.csv")
    seen = set(rows["class"])
    assert len(seen) >= 2 and seen <= classes, (seen, classes)     # class names, several
    # the first screen names every class as played, and reads the summary's numbers: the
    # requests not started are the results' rows of that kind, the per-class ok requests theirs
    for c in read_scenario(out / "scenario.jsonl").classes:
        assert f"{c.name:20s} {c.network.rtt_ms:7.0f} ms" in stdout, stdout
    # each fitted variable's mean in its unit is the model's mean as recorded (what wagon fit
    # prints), to its 3 digits shown
    variables = json.loads((out / "model.json").read_text())["variables"]
    scale = {"": 1, "s": 1, "ms": 1e-3, "B": 1, "KB": 1e3, "MB": 1e6}
    for name, v in variables.items():
        m = re.search(rf"\n    {name} +{v['best']} +mean +([\d.]+) ?(\w*) .* \(n={v['n']:,}\)",
                      stdout)
        assert m, (name, stdout)
        shown = float(m.group(1)) * scale[m.group(2)]
        assert shown == pytest.approx(v["law_mean"], rel=5e-3), (name, m.group(0))
        unit = {"interarrival": "ms s", "think": "ms s", "page_size": "B KB MB",
                "object_size": "B KB MB"}.get(name, "")
        assert m.group(2) in unit.split() or m.group(2) == unit, m.group(0)
    stop = (rows["error"] == "not_started").sum()
    assert (f"not started {stop:,} and in flight" in stdout) == (stop > 0), stdout
    ok = rows[rows["error"] == ""]
    for name, x in ok.groupby("class"):
        took = 1e3 * (x["last_byte"] - x["start"]).to_numpy()
        # the nearest rank, as the summary and the report take it (not pandas' interpolation)
        p50, p99 = np.percentile(took, [50, 99], method="inverted_cdf")
        assert re.search(rf"\n    {re.escape(name)} +{len(x):,} +{p50:.1f} +{p99:.1f}\n",
                         stdout), (name, len(x), p50, p99, stdout)


def test_steady_state_starts_where_the_ramp_reaches_its_level():
    """A ramp of 5 requests/s per second up to 100/s at 20 s, flat to the last arrival at 45 s:
    the first 5-second mean within 10 % of 100 is x[16:21] (80..100, mean 90)."""
    x = np.minimum(5 * np.arange(60), 100).tolist()
    first, level = steady_state(x, 45.0)
    assert first == 16
    assert level == pytest.approx((80 + 85 + 90 + 95 + 25 * 100) / 29)
    assert steady_state(x[:12], 12.0) is None                  # only the ramp
    assert steady_state(x, 24.0) is None                       # 8 s of plateau: too short


def test_steady_state_of_a_bursty_plateau():
    """Pages arrive with bursts of objects: four seconds of 60 requests then one of 260, from
    the start (mean 100, median 60). Every 5-second mean is 100: steady throughout."""
    x = [60, 60, 60, 60, 260] * 9
    assert steady_state(x, 45.0) == (0, pytest.approx(100.0))


def _source_copy(dest: Path) -> Path:
    """The checkout's sources copied to ``dest``: pip builds there (setuptools writes build/ and
    egg-info next to setup.cfg), so nothing is written inside the checkout."""
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
        ".git", "*.egg-info", "build", "dist", "__pycache__", "wagon-demo", ".pytest_cache",
        ".hypothesis", "tests"))
    return dest


def test_installed_package_runs_the_demo_from_an_empty_folder(tmp_path):
    """``pip install .`` (not editable) into a new venv outside the checkout, then ``wagon demo``
    from an empty folder: the sample log is package data, nothing is read from a checkout."""
    src = _source_copy(tmp_path / "src")
    venv = tmp_path / "venv"
    # the venv sees this interpreter's libraries for NumPy & co. (and pip and setuptools: it is
    # made without pip of its own) through a .pth of their folders, whatever this interpreter is
    # (a venv's --system-site-packages would be the system's, not this one's; this one's own,
    # where it is such a venv, are in site's list); the folders' own .pth files (an editable
    # wagon) do not run, and wagon is installed into the venv, first on its path
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                          "['purelib'])"], capture_output=True, text=True, check=True)
    parent = dict.fromkeys([*(sysconfig.get_paths()[k] for k in ("purelib", "platlib")),
                            *site.getsitepackages()])
    (Path(own.stdout.strip()) / "_parent_libraries.pth").write_text("\n".join(parent) + "\n")
    r = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps",
                        "--no-build-isolation", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    # where imports would load them from (SciPy is not loaded for this: the demo imports them)
    where = subprocess.run([str(py), "-c", "from importlib.util import find_spec; "
                            "print(*(find_spec(m).origin for m in "
                            "('wagon', 'wagon.fitting', 'wagon.data')))"],
                           cwd=empty, env=env, capture_output=True, text=True, check=True)
    assert all(line.startswith(str(venv)) for line in where.stdout.split()), where.stdout
    bare = subprocess.run([str(py), "-c", "import fitting"], cwd=empty, env=env,
                          capture_output=True, text=True)
    assert bare.returncode != 0 and "No module named 'fitting'" in bare.stderr
    r = subprocess.run([str(venv / "bin" / "wagon"), "demo", *SHORT], cwd=empty, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stderr == ""                                  # no warning about nothing
    check_demo_output(empty / "wagon-demo", r.stdout)


def test_an_outdir_that_is_a_file_is_one_line(tmp_path):
    """'wagon demo --outdir FILE' ended in a NotADirectoryError traceback; the file is kept."""
    from click.testing import CliRunner
    from wagon.cli import main
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    r = CliRunner().invoke(main, ["demo", "--outdir", str(afile), *SHORT])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "Not a directory" in r.output and afile.read_text() == "mine"
