"""Every public name of the library (``wagon.__all__``, and the classes its functions return)
has an example in its docstring, and every example runs and prints what it says: doctest, in a
directory holding what the examples name — the bundled sample log as ``access_log.gz``, its
model as ``model.json``, a scenario as ``scenario.jsonl`` and a replay of it against nginx as
``results.csv``."""
from __future__ import annotations

import doctest
import shutil

import pytest
from click.testing import CliRunner

import wagon
from wagon.cli import main
from wagon.fitting import FitReport
from wagon.formats.model import Variable
from wagon.formats.site import build_site

from .servers import nginx

PUBLIC = sorted(set(wagon.__all__) - {"__version__"})
RETURNED = {"Variable": Variable, "FitReport": FitReport}       # reached through the names above


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, sample, sample_model):
    """The files the examples name, made as a user would make them."""
    d = tmp_path_factory.mktemp("examples")
    shutil.copy(sample, d / "access_log.gz")
    shutil.copy(sample_model[0], d / "model.json")
    sc = wagon.synthesize(d / "model.json", sessions=3, seed=1, classes="lan/http11",
                          speedup=100)
    sc.write(d / "scenario.jsonl")
    build_site(sc.site, d / "site")
    with nginx(d / "site", d / "ng", access_log=False) as server:
        r = CliRunner().invoke(main, ["replay", str(d / "scenario.jsonl"), "--target",
                                      server.url, "--results", str(d / "results.csv"),
                                      "--quiet"])
    assert r.exit_code == 0, r.output
    return d


@pytest.mark.parametrize("name", PUBLIC + sorted(RETURNED))
def test_every_public_name_has_an_example_that_runs(name, workdir, monkeypatch):
    obj = RETURNED.get(name) or getattr(wagon, name)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={"wagon": wagon})
    assert tests and tests[0].examples, f"{name}: no example in its docstring"
    monkeypatch.chdir(workdir)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0
