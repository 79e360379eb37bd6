"""Shared fixtures: the bundled real traces and sample, external tools, and the rule that tests
never write inside the checkout (each test runs in its own temporary directory)."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from wagon.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
NASA = DATA / "nasa-aug95-morning.log.gz"
EPA = DATA / "epa-http-aug95-half.log.gz"
ELASTIC = DATA / "elastic-apache-may15.log.gz"
IN_CI = os.environ.get("CI", "").lower() == "true"

sys.dont_write_bytecode = True                # no __pycache__ for what the tests import now
# no .hypothesis/ in the checkout: no example database, its other caches in a temporary folder
settings.register_profile("wagon", database=None)
settings.load_profile("wagon")
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="wagon-hypothesis-"))


#: modules whose tests time real servers, emulated networks or the generator's own lag: they
#: run alone, after the others (README's test command runs those two at a time, pytest-xdist);
#: a test of theirs marked ``untimed`` times nothing (a fit on a cluster) and runs with the others
TIMED = frozenset(("test_replay", "test_netpath", "test_protocols", "test_sweep", "test_window",
                   "test_closed_loop", "test_generator_health", "test_cluster", "test_progress",
                   "test_compare_speedup", "test_resolution", "test_walltime"))


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if (item.module.__name__.rsplit(".", 1)[-1] in TIMED
                and item.get_closest_marker("untimed") is None):
            item.add_marker(pytest.mark.timed)


#: the packet path (``--network packet``) needs root and a TUN device; under CI=true its tests
#: run, and fail if they cannot
needs_packet_path = pytest.mark.skipif(
    not IN_CI and (os.geteuid() != 0 or not os.path.exists("/dev/net/tun")),
    reason="the packet path needs root and /dev/net/tun")


def require_tool(name: str) -> str:
    """The path of an external program; skip without it, except under CI, where it fails."""
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        why = f"{name} is not installed (.ci/run installs it from Debian's packages)"
        if IN_CI:
            pytest.fail(f"CI=true: {why}")
        pytest.skip(why)
    return path


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Every test runs in its own temporary directory: files written by default names
    (model.json, scenario.jsonl, report.html) land there, not in the checkout."""
    monkeypatch.chdir(tmp_path)


def _checkout_state() -> str | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    out = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--ignored",
                          "--untracked-files=all"], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def pytest_sessionstart(session) -> None:
    session.config._wagon_checkout = _checkout_state()


def pytest_sessionfinish(session, exitstatus) -> None:
    """Fail the run when a test wrote inside the checkout (anything git sees changed)."""
    before, after = session.config._wagon_checkout, _checkout_state()
    if before is None or after is None or before == after:
        return
    new = sorted(set(after.splitlines()) - set(before.splitlines()))
    new = [line for line in new if "__pycache__" not in line and not line.endswith(".pyc")]
    if new:
        print("\nwagon: the tests wrote inside the checkout:\n  " + "\n  ".join(new[:20]),
              file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def nasa() -> Path:
    return NASA


@pytest.fixture(scope="session")
def epa() -> Path:
    return EPA


@pytest.fixture(scope="session")
def sample():
    """The bundled sample log, as the installed package holds it."""
    with resources.as_file(resources.files("wagon.data") / "sample-combined.log.gz") as path:
        yield Path(path)


def _run_once(factory, name: str, args: list[str], out: str) -> tuple[Path, str, str]:
    """``wagon ARGS -o OUT`` once per run, shared by pytest-xdist's workers (the first to take
    the lock runs it, the others read what it wrote): (OUT's path, standard output, error)."""
    base = factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(exist_ok=True)
    written, done = folder / out, folder / "printed.json"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            result = CliRunner().invoke(main, [*args, "-o", str(written)])
            assert result.exit_code == 0, result.output
            done.write_text(json.dumps([result.stdout, result.stderr]))
        stdout, stderr = json.loads(done.read_text())
    return written, stdout, stderr


def _fit_once(factory, name: str, args: list[str]) -> tuple[Path, str, str]:
    """``wagon fit ARGS`` once per run: (model path, standard output, error)."""
    return _run_once(factory, f"fit-{name}", ["fit", *args], "model.json")


@pytest.fixture(scope="session")
def nasa_model(tmp_path_factory, nasa) -> tuple[Path, str]:
    """``wagon fit`` of the NASA trace, once per run: (model path, the printed summary)."""
    path, stdout, _ = _fit_once(tmp_path_factory, "nasa", [str(nasa)])
    return path, stdout


@pytest.fixture(scope="session")
def epa_model(tmp_path_factory, epa):
    """``wagon fit --json`` of the EPA trace, once per run: (model path, the summary, what it
    wrote on standard error)."""
    path, stdout, stderr = _fit_once(tmp_path_factory, "epa",
                                     [str(epa), "--base-month", "1995-08", "--json"])
    return path, json.loads(stdout), stderr


@pytest.fixture(scope="session")
def sample_model(tmp_path_factory, sample) -> tuple[Path, dict]:
    """``wagon fit`` of the sample, once per run: (model path, the --json summary). Tests that
    change the model write a copy."""
    path, stdout, _ = _fit_once(tmp_path_factory, "sample", [str(sample), "--json"])
    return path, json.loads(stdout)


@pytest.fixture(scope="session")
def nasa_fit_report(tmp_path_factory, nasa) -> Path:
    """``wagon report --fit`` of the NASA trace, once per run: the HTML page."""
    return _run_once(tmp_path_factory, "report-nasa", ["report", str(nasa), "--fit"],
                     "report.html")[0]
