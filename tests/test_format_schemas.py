"""The JSON Schemas docs/formats.md publishes are what the readers enforce, checked with an
independent validator (``jsonschema``): real files (a fitted model, a synthesized scenario, a
replay's run file) are valid, and every mutation a reader refuses the schema refuses too —
so every file the schema accepts the reader accepts — except for the rules JSON Schema cannot
state, which docs/formats.md lists (an index into another list, ids that increase, starts in
order, a law's parameter range, lower ≤ upper, keys of one map among another's)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.cli import main
from wagon.formats.model import ModelError, validate
from wagon.formats.run_schema import RUN_SCHEMA
from wagon.formats.scenario import ScenarioError, read_scenario

from .test_model_mutations import APP_PAGE, ODD, _paths, _set
from .test_results_mutations import NOT_RUN, _run_mutant, played  # noqa: F401 (a fixture)
from .test_scenario_mutations import (NOT_A_SESSION_FIELD, NOT_A_SIZE, NOT_A_URL, NOT_INDICES,
                                      valid)  # noqa: F401 (a fixture)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "formats.md"
#: why a reader refuses what JSON Schema cannot say (docs/formats.md, "What the schemas
#: cannot say")
BEYOND = re.compile(r"bad parameters for|parameters out of range|does not exist|row .* is "
                    r"malformed|must be \[page, count\] rows of existing pages|must map its "
                    r"parameters|lower > upper|names page|is not greater|must be in order|"
                    r"counts no click|once ≤ urls ≤ references|a law of int, token|"
                    r"placeholders of its URL|spearman in \[-1, 1\] inside its interval|"
                    r"\[lower, upper\]|windows must be in order")


@pytest.fixture(scope="module")
def schemas() -> dict[str, jsonschema.Draft202012Validator]:
    """The schemas of docs/formats.md by title, each itself a valid JSON Schema."""
    found = {}
    for block in re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.S):
        doc = json.loads(block) if block.lstrip().startswith('{\n "$schema"') else None
        if doc is not None:
            jsonschema.Draft202012Validator.check_schema(doc)
            found[doc["title"]] = jsonschema.Draft202012Validator(doc)
    assert set(found) == {"wagon model file", "wagon scenario header line",
                          "wagon scenario session line", "wagon run file"}
    return found


def test_the_run_file_schema_is_the_one_read_run_enforces(schemas):
    published = dict(schemas["wagon run file"].schema)
    assert {k: v for k, v in published.items() if k not in ("$schema", "title")} == RUN_SCHEMA


def test_real_files_are_valid(schemas, sample_model, played, tmp_path):
    model = json.loads(sample_model[0].read_text())
    schemas["wagon model file"].validate(model)
    r = CliRunner().invoke(main, ["synth", str(sample_model[0]), "--sessions", "30", "-o",
                                  str(tmp_path / "s.jsonl")])
    assert r.exit_code == 0, r.output
    header, *sessions = (json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines())
    schemas["wagon scenario header line"].validate(header)
    for s in sessions:
        schemas["wagon scenario session line"].validate(s)
    schemas["wagon run file"].validate(json.loads(played["run"]))


def _scenario_mutants(valid_lines: list[str]):
    """Every forbidden value of tests/test_scenario_mutations in every place it is tried:
    (line number, header, sessions, whether JSON Schema can state the rule: not an index out
    of another list's range, nor 1.0 for an integer, which JSON Schema counts as one)."""
    header, sessions = json.loads(valid_lines[0]), [json.loads(x) for x in valid_lines[1:]]
    copy = lambda: (json.loads(json.dumps(header)), json.loads(json.dumps(sessions)))  # noqa
    for kind, key, values in (("pages", "url", NOT_A_URL), ("pages", "size", NOT_A_SIZE),
                              ("pages", "objects", NOT_INDICES), ("pages", "links", NOT_INDICES),
                              ("objects", "url", NOT_A_URL), ("objects", "size", NOT_A_SIZE)):
        for value in values:
            h, s = copy()
            h["site"][kind][0][key] = value
            yield 1, h, s, not (value == [99] or isinstance(value, list) and value
                                and type(value[0]) is float)
    for field, values in NOT_A_SESSION_FIELD.items():
        for value in values:
            if value is None and field == "agent":
                continue
            h, s = copy()
            s[1][field] = value
            yield 3, h, s, not (field in ("class", "agent") and value in (5, 9)
                                or field == "clicks" and value in ([[99, 0.0]], [[0, 0.0, 1]])
                                or field != "start" and type(value) is float
                                and value.is_integer())


def test_what_the_scenario_reader_refuses_the_schemas_refuse(schemas, valid, tmp_path):
    tried = 0
    for line, header, sessions, stated in _scenario_mutants(valid):
        path = tmp_path / "m.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in [header] + sessions) + "\n")
        with pytest.raises(ScenarioError):
            list(read_scenario(path).sessions())
        ok = (schemas["wagon scenario header line"].is_valid(header) and
              all(schemas["wagon scenario session line"].is_valid(s) for s in sessions))
        assert ok != stated, (line, header["site"] if line == 1 else sessions)
        tried += 1
    assert tried >= 80                      # every value of the lists, in its place


# 100 mutants a run, drawn anew each run; bench/mutations_audit.py checks thousands
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_what_the_model_reader_refuses_the_schema_refuses(schemas, sample_model, data):
    doc = json.loads(sample_model[0].read_text())
    doc["arrivals"]["process"] = {"law": "hawkes", "mu": 0.5, "eta": 0.6, "beta": 2.0,
                                  "chosen": True}       # clustered arrivals' fields too
    doc["site"]["pages"][0].update(json.loads(json.dumps(APP_PAGE)))  # a template page
    places = [p for p in _paths(doc) if p and p[0] not in ("provenance", "generator",
                                                           "created")]
    where, value = data.draw(st.sampled_from(places)), data.draw(st.sampled_from(ODD))
    _set(doc, where, value)
    try:
        validate(json.loads(json.dumps(doc)))
    except ModelError as e:
        if schemas["wagon model file"].is_valid(doc):       # 1e308 is an integer to it
            assert BEYOND.search(str(e)) or type(value) is float and value.is_integer(), (
                where, str(e))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_what_read_run_refuses_the_schema_refuses(schemas, played, data):
    mutant = _run_mutant(json.loads(played["run"]), data)
    assert not schemas["wagon run file"].is_valid(mutant)
