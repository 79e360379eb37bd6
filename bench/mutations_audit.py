"""Mutation audit of the file formats (issue 27's closing counts, issue 36's): the mutation
generators of tests/test_{model,scenario,results,recipe}_mutations.py (driven by hypothesis, de-duplicated) run
through the real commands in-process (click's CliRunner), every mutant through every command
that reads its format. Per format and command: tried, clean errors (exit 2, one line, no
traceback), tracebacks (an exception escaping, or "Traceback" in the output), other exits,
silently accepted (an invalid file and the command ran) and valid accepted.

Which mutants are invalid: the tests' own constructions are invalid by construction (the
scenario, CSV and run-file generators); a value put anywhere (the model generator, and the same
over a scenario's lines) is invalid when the JSON Schema docs/formats.md publishes refuses the
file (``jsonschema``, an independent validator). Schema-valid mutants a command accepts are
listed by place and value, for a reader to judge (the rules JSON Schema cannot state).

    python bench/mutations_audit.py [--examples 1000] [--formats model,scenario,...,recipe]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from importlib import resources
from pathlib import Path

import jsonschema
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.servers import write_scenario_file  # noqa: E402
from tests.test_model_mutations import ODD, _paths, _set  # noqa: E402
from tests import test_results_mutations  # noqa: E402
from tests.test_replay import wagon_serve  # noqa: E402
from tests.test_results_mutations import _csv_mutant, _run_mutant  # noqa: E402
from tests.test_scenario_mutations import _mutated  # noqa: E402
from tests.test_recipe_mutations import VALID, mutant as _recipe_mutant, toml  # noqa: E402
from wagon.cli import main  # noqa: E402

FILES = {"requests": "r.csv", "pages": "r.pages.csv", "run": "r.run.json"}
LATE = ",50.000000,"                # tests/test_results_mutations.py's time after the run's end


class _Enough(Exception):
    """Enough distinct mutants drawn."""


def collect(make, n: int) -> tuple[list, bool]:
    """Up to ``n`` distinct mutants of ``make(data)`` (None: skipped), drawn by hypothesis;
    and whether hypothesis ran out of new ones first (the space is smaller)."""
    seen: dict[str, object] = {}

    @settings(max_examples=50 * n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def draw(data):
        mutant = make(data)
        if mutant is not None:
            seen.setdefault(json.dumps(mutant, sort_keys=True, default=repr), mutant)
        if len(seen) >= n:
            raise _Enough

    try:
        draw()
    except _Enough:
        return list(seen.values())[:n], False
    return list(seen.values()), True


def schemas() -> dict[str, jsonschema.Draft202012Validator]:
    """The JSON Schemas of docs/formats.md by title."""
    found = {}
    for block in re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "formats.md").read_text(),
                            re.S):
        if block.lstrip().startswith('{\n "$schema"'):
            doc = json.loads(block)
            found[doc["title"]] = jsonschema.Draft202012Validator(doc)
    return found


#: exit statuses of a command that ran (replay: 4, a failed request, e.g. a mutant's URL 404;
#: recover: 5, a run cut short by the death of its parent)
ACCEPT = (0, 1, 4, 5)


def verdict(r) -> str:
    """How a command took a mutant."""
    if r.exception is not None and not isinstance(r.exception, SystemExit) or \
            "Traceback" in r.output:
        return "traceback"
    if r.exit_code == 2:
        lines = r.output.strip().splitlines()
        return "clean error" if len(lines) == 1 and lines[0].startswith("Error: ") else \
            "unclean error"
    return "ran" if r.exit_code in ACCEPT else f"exit {r.exit_code}"


def invoke(args: list[str], cwd: Path):
    """``wagon ARGS`` in-process, in the folder ``cwd``."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args)
    finally:
        os.chdir(old)


def tally(name: str, mutants: list, exhausted: bool, commands: dict, write, invalid,
          reads=lambda c, m: True) -> dict:
    """Run every mutant through every command that reads what it changed (``reads``: False,
    not read; "valid", a change the command's reading allows); the counts, and what was
    accepted."""
    counts = {c: Counter() for c in commands}
    notes = defaultdict(list)
    for i, m in enumerate(mutants):
        d = Path(tempfile.mkdtemp(prefix=f"mut-{name}-"))
        write(d, m)
        for c, args in commands.items():
            how = reads(c, m)
            if not how:
                counts[c]["not read"] += 1
                continue
            bad = how != "valid" and invalid(m)
            r = invoke(args(d), d)
            v = verdict(r)
            counts[c]["tried"] += 1
            counts[c]["invalid"] += bad
            if v == "ran":
                v = "silently accepted" if bad else "valid accepted"
                notes[c, v].append(describe(m))
            elif v != "clean error":
                notes[c, v].append((describe(m), r.output[-400:], repr(r.exception)))
            counts[c][v] += 1
        shutil.rmtree(d)
        if (i + 1) % 200 == 0:
            print(f"  {name}: {i + 1}/{len(mutants)}", file=sys.stderr, flush=True)
    return {"format": name, "mutants": len(mutants), "space_exhausted": exhausted,
            "counts": {c: dict(v) for c, v in counts.items()},
            "notes": {f"{c}: {v}": (Counter(map(str, x)).most_common(40) if v.endswith(
                "accepted") else x[:10]) for (c, v), x in notes.items()}}


def describe(m) -> object:
    """A mutant's place and value, indices folded (for grouping)."""
    if isinstance(m, dict) and "doc" in m:
        return toml(m["doc"]).replace("\n", " ")[:160]
    if isinstance(m, dict) and "where" in m:
        return (re.sub(r"\b\d+\b", "*", json.dumps(m["where"])), json.dumps(m["value"]))
    if "text" in m:                     # a results file: its first changed line, as it is now
        a, b = ORIGINALS[m["how"]].split("\n"), m["text"].split("\n")
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return f"line {k + 1}: {b[k][:160] if k < len(b) else '(cut)'}"
    return m.get("how", "?")


# --- model -------------------------------------------------------------------------------

def audit_model(n: int, work: Path, schema) -> dict:
    model = work / "model.json"
    r = CliRunner().invoke(main, ["fit", str(resources.files("wagon.data") / "sample-combined.log.gz"),
                                  "-o", str(model)])
    assert r.exit_code == 0, r.output
    doc = json.loads(model.read_text())
    places = [list(p) for p in _paths(doc) if p]

    def make(data):
        return {"where": data.draw(st.sampled_from(places)), "value": data.draw(
            st.sampled_from(ODD))}

    def mutant(m) -> dict:
        x = json.loads(json.dumps(doc))
        _set(x, m["where"], m["value"])
        return x

    mutants, exhausted = collect(make, n)
    print(f"model: {len(places)} places x {len(ODD)} values = {len(places) * len(ODD)}",
          file=sys.stderr)
    commands = {"synth": lambda d: ["synth", "m.json", "--sessions", "5", "-o", "s.jsonl"],
                "advise keepalive --model": lambda d: ["advise", "keepalive", "--model", "m.json",
                                                      "--delta", "0.5"],
                "site build --model": lambda d: ["site", "build", "site", "--model", "m.json"]}
    out = tally("model", mutants, exhausted, commands,
                lambda d, m: (d / "m.json").write_text(json.dumps(mutant(m))),
                lambda m: mutant(m) != doc and not schema["wagon model file"].is_valid(mutant(m)))
    out["space"] = len(places) * len(ODD)
    return out


# --- scenario ----------------------------------------------------------------------------

def audit_scenario(n: int, work: Path, schema) -> dict:
    """The tests' forbidden values (every one), then a value of ODD anywhere (schema oracle)."""
    path = write_scenario_file(work / "base.jsonl",
                               [("/a.html", 100, [0, 1]), ("/b.html", 50, [])],
                               [("/o0.gif", 10), ("/o1.gif", 20)], ["lan/http11"],
                               [(0.0, 0, [(0, 0.0), (1, 0.01)]), (0.01, 0, [(1, 0.0)]),
                                (0.02, 0, [(0, 0.0)])])
    valid = path.read_text().splitlines()
    lines = [json.loads(x) for x in valid]

    def built(data):
        mutated, line = _mutated(valid, data)
        return {"how": "forbidden", "lines": mutated} if line else None

    places = [[i, *p] for i, x in enumerate(lines) for p in _paths(x) if p]

    def anywhere(data):
        return {"where": data.draw(st.sampled_from(places)), "value": data.draw(
            st.sampled_from(ODD))}

    forbidden, f_exhausted = collect(built, n)
    odd, o_exhausted = collect(anywhere, n)
    print(f"scenario: {len(forbidden)} forbidden by construction (exhausted: {f_exhausted}), "
          f"{len(places)} places x {len(ODD)} values = {len(places) * len(ODD)}", file=sys.stderr)

    def text(m) -> list[str]:
        if "lines" in m:
            return m["lines"]
        x = json.loads(json.dumps(lines))
        _set(x, m["where"], m["value"])
        return [json.dumps(y) for y in x]

    def invalid(m) -> bool:
        if "lines" in m:
            return True
        header, *sessions = (json.loads(y) for y in text(m))
        return text(m) != valid and not (
            schema["wagon scenario header line"].is_valid(header) and
            all(schema["wagon scenario session line"].is_valid(s) for s in sessions))

    site = work / "site"
    assert CliRunner().invoke(main, ["site", "build", str(site), "--scenario",
                                     str(path)]).exit_code == 0
    with wagon_serve(work, "--site", str(site), "--max-time", "86400") as (port, _):
        commands = {"export": lambda d: ["export", "m.jsonl", "--to", "clf", "-o", "x.log"],
                    "site build --scenario": lambda d: ["site", "build", "site", "--scenario",
                                                        "m.jsonl"],
                    "replay": lambda d: ["replay", "m.jsonl", "--target",
                                         f"http://127.0.0.1:{port}/", "--results", "r.csv",
                                         "--quiet", "--no-emulation", "--max-time", "10"]}
        (work / "m.jsonl").write_text(path.read_text())
        base = invoke(commands["replay"](work), work)
        print(f"scenario: replay of the valid base: exit {base.exit_code} {base.output[-300:]}", file=sys.stderr)
        out = tally("scenario", forbidden + odd, f_exhausted and o_exhausted, commands,
                    lambda d, m: (d / "m.jsonl").write_text("\n".join(text(m)) + "\n"), invalid,
                    lambda c, m: c != "site build --scenario" or text(m)[0] != valid[0])
    out.update(space=f"{len(forbidden)} forbidden + {len(places) * len(ODD)} anywhere",
               forbidden=len(forbidden), anywhere=len(odd))
    return out


# --- results -----------------------------------------------------------------------------

class _Factory:
    """``tmp_path_factory`` for the tests' fixture: folders under ``work``."""

    def __init__(self, work: Path):
        self.work = work

    def mktemp(self, name: str) -> Path:
        (self.work / name).mkdir()
        return self.work / name


def played(work: Path) -> dict[str, str]:
    """A real replay's files against ``wagon serve`` (tests/test_results_mutations' fixture;
    its run file names the scenario, which stays in ``work``)."""
    return test_results_mutations.played.__wrapped__(_Factory(work))


def audit_results(name: str, n: int, files: dict[str, str]) -> dict:
    original = files[name]
    if name == "run":
        doc = json.loads(original)

        def make(data):
            return {"how": "run", "text": data.draw(st.sampled_from(
                [json.dumps(_run_mutant(doc, data))] * 6 + [
                    "[]", "null", "\"x\"", original[:len(original) // 2],
                    original.replace("\"version\": 6", "\"version\": NaN")]))}
    else:
        def make(data):
            text, line = _csv_mutant(original, name, data)
            return {"how": name, "text": text} if line else None

    mutants, exhausted = collect(make, n)

    def write(d: Path, m) -> None:
        for what, p in FILES.items():
            (d / p).write_text(m["text"] if what == name else files[what], newline="")
        (d / "a.csv").write_text(files["requests"], newline="")
        (d / "a.pages.csv").write_text(files["pages"], newline="")
        (d / "a.run.json").write_text(files["run"])
        killed(d / "k", m["text"] if name == "run" else files["run"],
               *(m["text"] if name == w else files[w] for w in ("requests", "pages")))

    def reads(c: str, m) -> bool | str:
        """recover reads the parts (no header), and drops a last line cut by a killed
        writer; a time after the run's end (the tests' "late" mutation) is none in a killed
        run's parts, which have no end."""
        if c != "recover" or name == "run":
            return True
        if m["text"].split("\r\n", 1)[0] != original.split("\r\n", 1)[0]:
            return False
        if LATE in m["text"] and LATE not in original:
            return "valid"
        return "valid" if not m["text"].endswith("\r\n") else True

    commands = {"report": lambda d: ["report", "r.csv", "-o", "x.html"],
                "hurst": lambda d: ["hurst", "r.csv", "--scales", "0.001"],
                "compare": lambda d: ["compare", "a.csv", "r.csv"],
                "recover": lambda d: ["recover", "k/r.csv"]}
    with tempfile.TemporaryDirectory() as base:
        write(Path(base), {"text": original})
        print(f"{name}: the unmutated files: " + ", ".join(
            f"{c} exit {invoke(a(Path(base)), Path(base)).exit_code}"
            for c, a in commands.items()), file=sys.stderr)
    return tally(name, mutants, exhausted, commands, write, lambda m: m["text"] != original,
                 reads)


def killed(d: Path, run: str, requests: str, pages: str) -> None:
    """What a replay whose parent was killed leaves (replay/parts.py): the run file pending,
    without its summary, and one process' part files (the rows, no header)."""
    d.mkdir()
    try:
        doc = json.loads(run)
        if isinstance(doc, dict) and doc.get("summary") == ORIGINAL_SUMMARY[0]:
            doc["summary"] = None
        run = json.dumps(doc) if isinstance(doc, dict) else run
    except ValueError:
        pass
    (d / "r.run.json.part").write_text(run)
    for text, part in ((requests, "r.csv.part0"), (pages, "r.pages.csv.part0")):
        (d / part).write_text(text.split("\r\n", 1)[1] if "\r\n" in text else "", newline="")


# --- recipes -----------------------------------------------------------------------------

def audit_recipe(n: int) -> dict:
    """Recipes with one forbidden value (invalid by construction) through ``wagon experiment
    --dry-run``."""
    mutants, exhausted = collect(lambda data: {"doc": _recipe_mutant(data)}, n)
    commands = {"experiment --dry-run": lambda d: ["experiment", "m.toml", "--dry-run"]}
    with tempfile.TemporaryDirectory() as base:
        (Path(base) / "m.toml").write_text(toml(VALID))
        print("recipe: the valid recipe: exit "
              f"{invoke(commands['experiment --dry-run'](Path(base)), Path(base)).exit_code}",
              file=sys.stderr)
    return tally("recipe", mutants, exhausted, commands,
                 lambda d, m: (d / "m.toml").write_text(toml(m["doc"])), lambda m: True)


#: the played files, by format (for describing their mutants)
ORIGINALS: dict[str, str] = {}
#: the played run's summary (a pending run file has none)
ORIGINAL_SUMMARY: list = [None]


def show(r: dict) -> None:
    """A format's table, and what was accepted or not clean."""
    print(f"\n== {r['format']}: {r['mutants']} distinct mutants (space exhausted: "
          f"{r['space_exhausted']}; space {r.get('space', '?')})")
    print(f"{'command':28} {'tried':>6} {'invalid':>7} {'clean':>6} {'trace':>6} "
          f"{'silent':>6} {'validok':>7} {'other':>6} {'unread':>6}")
    for c, k in r["counts"].items():
        other = sum(v for key, v in k.items() if key.startswith(("exit", "unclean")))
        print(f"{c:28} {k.get('tried', 0):6} {k.get('invalid', 0):7} "
              f"{k.get('clean error', 0):6} {k.get('traceback', 0):6} "
              f"{k.get('silently accepted', 0):6} {k.get('valid accepted', 0):7} {other:6} "
              f"{k.get('not read', 0):6}")
    for key, x in r["notes"].items():
        print(f"  -- {key}: {json.dumps(x, default=str)[:3000]}")


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=1000, help="Distinct mutants per format.")
    ap.add_argument("--formats", default="model,scenario,requests,pages,run,recipe")
    ap.add_argument("--json", default=None, help="Also write the counts here.")
    a = ap.parse_args()
    want = a.formats.split(",")
    schema = schemas()
    results = []

    def done(r: dict) -> None:
        results.append(r)
        show(r)
        if a.json:
            Path(a.json).write_text(json.dumps(results, indent=1, default=str))

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "model" in want:
            done(audit_model(a.examples, work, schema))
        if "scenario" in want:
            done(audit_scenario(a.examples, work, schema))
        if {"requests", "pages", "run"} & set(want):
            files = played(work)
            ORIGINAL_SUMMARY[0] = json.loads(files["run"])["summary"]
            ORIGINALS.update(files)
            for name in ("requests", "pages", "run"):
                if name in want:
                    done(audit_results(name, a.examples, files))
        if "recipe" in want:
            done(audit_recipe(a.examples))


if __name__ == "__main__":
    main_()
