"""Every model wagon reads is checked: hypothesis replaces one value anywhere in a fitted model
(the bundled sample's) with a value of another type or an absurd one, and ``wagon synth``
reading it either synthesizes (the value was free, as a provenance note is) or refuses it in
one line with exit 2: never a traceback. Values the format forbids by construction (a page URL
of 0, an object size of 1e18, a law that is not a name, a parameter that is not a finite
number) are refused."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.cli import main

#: a template page (version 7) with a law of each kind
APP_PAGE = {"url": "/item/{id}?q={q}&s={s}&sid={sid}", "method": "POST", "params": {
    "id": {"law": "int", "n": 40, "min": 3, "max": 900, "distinct": 25, "zipf": 1.2},
    "q": {"law": "token", "n": 40, "distinct": 12, "zipf": 0.8},
    "s": {"law": "enum", "n": 40, "values": {"price": 0.7},
          "other": {"share": 0.3, "distinct": 4, "zipf": 1.0}},
    "sid": {"law": "opaque", "n": 40, "alphabet": "hex", "lengths": [[32, 40]]}}}

#: where the template page's redirect went (version 8): a target with a law, one without
REDIRECT = {"from": "POST " + APP_PAGE["url"], "requests": 30, "delay": 0.5, "to": [
    {"url": "/done/{n}", "share": 0.75, "requests": 22, "status": 200, "size": 900,
     "params": {"n": {"law": "int", "n": 22, "min": 1, "max": 50, "distinct": 20, "zipf": 0.5}}},
    {"url": "/again", "method": "POST", "share": 0.25, "requests": 8, "status": 303, "size": 0}]}

ODD = [None, -1, 0, 1e308, -1e308, "x", "", [], {}, True, 1.5, [1, 2], {"a": 1}, 10**20]


def _paths(x, path=()):
    """Every place in a JSON document (the first 5 items of each list)."""
    yield path
    items = x.items() if isinstance(x, dict) else enumerate(x[:5]) if isinstance(x, list) else ()
    for k, v in items:
        yield from _paths(v, path + (k,))


def _set(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _synth(tmp_path, doc) -> object:
    (tmp_path / "m.json").write_text(json.dumps(doc))
    return CliRunner().invoke(main, ["synth", str(tmp_path / "m.json"), "--sessions", "5",
                                     "-o", str(tmp_path / "s.jsonl")])


@pytest.fixture(scope="module")
def model(sample_model) -> tuple[dict, list]:
    doc = json.loads(sample_model[0].read_text())
    doc["site"]["pages"][0].update(APP_PAGE)             # a template page's laws mutated too
    doc["site"]["redirects"] = [REDIRECT]                # and where its redirect went
    return doc, [p for p in _paths(doc) if p]


# 30 mutants a run, drawn anew each run (no example database): the search goes on run after
# run; bench/mutations_audit.py puts thousands through every command that reads a model
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_no_mutation_of_a_model_is_a_traceback(tmp_path_factory, model, data):
    doc, paths = model
    mutant = json.loads(json.dumps(doc))
    _set(mutant, data.draw(st.sampled_from(paths)), data.draw(st.sampled_from(ODD)))
    r = _synth(tmp_path_factory.mktemp("mutant"), mutant)
    assert r.exit_code in (0, 2) and isinstance(r.exception, (SystemExit, type(None))), \
        (r.output, repr(r.exception))
    if r.exit_code == 2:
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), r.output


@pytest.mark.parametrize("where, value", [
    (("site", "pages", 0, "url"), 0), (("site", "pages", 1, "url"), None),
    (("site", "pages", 2, "url"), []), (("site", "objects", 0, "size"), 10**18),
    (("site", "objects", 1, "url"), "no slash"), (("site", "pages", 0, "objects"), [10**6]),
    (("site", "objects"), "x"), (("variables", "think", "best"), ["lognormal"]),
    (("variables", "think", "params", "mu"), "3"), (("site", "pages", 0, "hits"), -5),
    (("site", "entry"), None),                  # found by the property test: a TypeError
    (("variables", "clicks", "params", "lambda"), 0),   # a ZeroDivisionError (every place,
                                                        # every value: tests/test_format_schemas)
    (("variables", "interarrival", "params", "shape"), 1e308),  # a mean gap of 0: a
    (("arrivals", "profile", "bin_s"), True),   # ZeroDivisionError; a bool taken (mutations_audit)
    (("site", "transitions", 0, 2), 10**20),    # an OverflowError (mutations_audit)
    (("version",), 0), (("version",), True),   # taken (mutations_audit)
    # accepted by the reader, refused by the schema: every place × 14 values, read (helper's
    # exhaustive pass over 17,990 mutants of the sample's model)
    (("variables", "interarrival", "observation", "step"), None),
    (("variables", "interarrival", "observation", "step"), 0),
    (("variables", "think", "observation", "step"), 0),
    (("site", "object_delays", "dependence"), None),
    (("site", "redirects", 0, "from"), "POST /nowhere"),     # a form the site does not have
    (("site", "redirects", 0, "to", 1, "share"), 0.5),       # shares summing to 1.25
    (("site", "redirects", 0, "to", 0, "size"), 10**12),     # an object's size is at most 2^36
    (("site", "redirects", 0, "to", 0, "params", "m"), {"law": "int"}),   # no such placeholder
])
def test_forbidden_model_values_are_refused(tmp_path, model, where, value):
    mutant = json.loads(json.dumps(model[0]))
    _set(mutant, where, value)
    r = _synth(tmp_path, mutant)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "not a valid wagon model" in r.output and not (tmp_path / "s.jsonl").exists()


def test_a_law_that_cannot_be_drawn_from_is_one_line(tmp_path, model):
    """A think law of sigma 1e308 puts no mass inside the window its times were recorded in
    (found by bench/mutations_audit.py: a FitFailed traceback at the first draw, after SciPy's
    overflow warnings): exit 2, one line, no scenario."""
    mutant = json.loads(json.dumps(model[0]))
    _set(mutant, ("variables", "think", "params", "sigma"), 1e308)
    r = _synth(tmp_path, mutant)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "no mass" in r.output and not (tmp_path / "s.jsonl").exists()


def test_a_law_given_parameters_of_other_names_says_which_it_takes(tmp_path, model):
    """pareto(alpha=…) (another library's name for its shape) said "<lambda>() got an
    unexpected keyword argument 'alpha'": now the law's own parameters, from its family."""
    mutant = json.loads(json.dumps(model[0]))
    think = mutant["variables"]["think"]
    think["best"], think["params"] = "pareto", {"alpha": 1.5, "scale": 2.0}
    r = _synth(tmp_path, mutant)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "pareto takes shape, scale, not alpha, scale" in r.output, r.output
