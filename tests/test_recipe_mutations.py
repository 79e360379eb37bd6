"""Every recipe wagon reads is checked: hypothesis puts one value the recipe format forbids
(docs/experiments.md, its table and bounds; docs/formats.md, "Limits") in one key of a valid
recipe, and ``read_recipe`` must refuse it with a RecipeError of one line naming the file and
the key: zero tracebacks, zero invalid recipes accepted (issue 36: 87 of 300 were, a
10²⁰-s experiment among them). The mutants are invalid by construction."""
from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.cli import main
from wagon.experiment.recipe import RecipeError, read_recipe

VALID = {"experiment": {"name": "m", "duration": 2, "drain": 1},
         "workload": {"rate": 1}, "axes": {"workload.rate": [1, 2]}}
INF = math.inf
#: (table, key) → values it must never hold
FORBIDDEN = {
    ("experiment", "name"): ["", 5], ("experiment", "repetitions"): [0, 10**6, 1.5, True],
    ("experiment", "seed"): [-1, "1"], ("experiment", "duration"): [0, -1, 1e20, "5", INF],
    ("experiment", "drain"): [-1, 1e308, INF, 2e7], ("experiment", "pause"): [-1, 1e300],
    ("experiment", "hurst_bin"): [0, -1.0], ("experiment", "measures"): ["x", ["nope"], [1]],
    ("experiment", "nope"): [1],
    ("workload", "rate"): [0, -1, 1e7, math.nan], ("workload", "speedup"): [0, 1e7, 1e-6],
    ("workload", "pages"): [0, 10**8, 2.5], ("workload", "users"): [-1, 10**7],
    ("workload", "arrivals"): ["nope", 1], ("workload", "deterministic"): ["yes", 1],
    ("replay", "workers"): [0, 5000], ("replay", "loss"): [1, -0.1, 2],
    ("replay", "warmup"): [-1, 1e8], ("replay", "network"): ["nope"],
    ("replay", "emulation"): ["no"],
    ("axes", "workload.rate"): [[], [1, 1], [-1], "x", [1e9]],
    ("axes", "nope.x"): [[1]], ("axes", "experiment.name"): [["a", "b"]],
    ("axes", "experiment.drain"): [[1, 1e30]]}


def toml(doc: dict) -> str:
    """A recipe's text (tables of scalars and lists; TOML's inf and nan)."""
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if v != v else ("inf" if v > 0 else "-inf")
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(map(value, v)) + "]"
        return repr(v)
    return "".join(f"[{t}]\n" + "".join(f'"{k}" = {value(v)}\n' for k, v in keys.items())
                   for t, keys in doc.items())


def mutant(data) -> dict:
    """VALID with one forbidden value."""
    table, key = data.draw(st.sampled_from(sorted(FORBIDDEN)))
    doc = {t: dict(keys) for t, keys in VALID.items()}
    doc.setdefault(table, {})[key] = data.draw(st.sampled_from(FORBIDDEN[table, key]))
    return doc


def test_the_valid_recipe_is_read(tmp_path):
    (tmp_path / "m.toml").write_text(toml(VALID))
    assert len(read_recipe(tmp_path / "m.toml").cells()) == 2


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_forbidden_recipe_is_one_line_naming_its_key(tmp_path_factory, data):
    doc = mutant(data)
    path = tmp_path_factory.mktemp("recipe") / "m.toml"
    path.write_text(toml(doc))
    with pytest.raises(RecipeError) as e:
        read_recipe(path)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message


def test_a_dry_run_of_a_forbidden_recipe_exits_2(tmp_path):
    """Through the command: a 10²⁰-s experiment, a drain of 1e308 s (an OverflowError)."""
    for table, key, v in (("experiment", "duration", 1e20), ("experiment", "drain", 1e308)):
        doc = {t: dict(keys) for t, keys in VALID.items()}
        doc[table][key] = v
        (tmp_path / "m.toml").write_text(toml(doc))
        r = CliRunner().invoke(main, ["experiment", str(tmp_path / "m.toml"), "--dry-run"])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        assert f"{table}.{key}" in r.output and "Traceback" not in r.output
