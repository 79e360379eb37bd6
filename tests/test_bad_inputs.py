"""Every command on every kind of bad input file: one line on stderr, exit status 2, never a
traceback. The commands are walked from the click group, so a new command cannot escape."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.model import save_model
from wagon.synth import Generator, SynthOptions, synthesize

from .servers import free_port
from .test_synth import hand_model

#: how each command reads files: argument lists with F (the file under test) and G (a good
#: scenario, for commands taking two inputs), and the kinds of file each accepts
INVOCATIONS = {
    "fit": [(["fit", "F", "-o", "out.json"], set())],
    "synth": [(["synth", "F", "-o", "out.jsonl"], {"model"})],
    # the site is in the scenario's header: a scenario cut after it still gives the site
    "site build": [(["site", "build", "outdir", "--scenario", "F"],
                    {"scenario", "truncated_scenario"}),
                   (["site", "build", "outdir", "--model", "F"], {"model"})],
    "export": [(["export", "F", "--to", "httperf", "-o", "out.txt"], {"scenario"})],
    "replay": [(["replay", "F", "--target", "http://127.0.0.1:9/"], {"scenario"})],
    "recover": [(["recover", "F"], {"results"})],
    "sweep": [(["sweep", "F", "--target", "http://127.0.0.1:9/"], {"scenario"})],
    "serve": [(["serve", "--scenario", "F", "--port", "PORT", "--max-time", "1"],
               {"scenario", "truncated_scenario"}),
              (["serve", "--model", "F", "--port", "PORT", "--max-time", "1"], {"model"})],
    "hurst": [(["hurst", "F"], {"scenario", "results"}),
              (["hurst", "--counts", "F"], set())],
    "compare": [(["compare", "F", "G"], {"scenario", "results"}),
                (["compare", "G", "F"], {"scenario", "results"})],
    "advise keepalive": [(["advise", "keepalive", "--model", "F"], {"model"})],
    "experiment": [(["experiment", "F", "--dry-run"], set())],
    "report": [(["report", "F", "-o", "out.html"], {"scenario", "results", "model"}),
               (["report", "--compare", "G", "F", "-o", "out.html"], {"scenario", "results"})],
}
FILELESS = {"demo"}

RESULTS = ("session,class,page,url,kind,conn,reused,retried,intended,start,connect_start,"
           "connected,first_byte,last_byte,status,bytes,error\n"
           "0,lan,0,/index.html,page,0,0,0,0.0,0.0,0.0,0.001,0.002,0.003,200,100,\n")
BAD = {
    "model": None, "scenario": None, "results": RESULTS.encode(),
    "truncated_json": b'{"format": "wagon-model", "version": 1, "variables": {"think": ',
    "garbage": bytes(range(256)) * 8,
    "empty": b"",
    "bad_gzip": b"\x1f\x8b\x08\x00" + b"not really gzip" * 10,
    "foreign_csv": b"name,age,city\nalice,30,paris\nbob,25,rome\n",
    "truncated_scenario": None,      # a scenario cut in the middle of a session line
    "corrupt_results": RESULTS.encode() + b"1,lan,zero,/x,page,0,0,0,a,b,c,d,e,f,g,h,\n",
    "corrupt_model": b'{"format": "wagon-model", "version": 1, "variables": {"think": '
                     b'{"best": "lognormal", "params": {"mu": "three"}}}}',
}


def commands(group: click.Group, prefix=()) -> list[str]:
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += commands(cmd, prefix + (name,))
        else:
            out.append(" ".join(prefix + (name,)))
    return out


def test_every_command_is_covered():
    assert set(commands(main)) == set(INVOCATIONS) | FILELESS


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    model = hand_model()
    save_model(model, d / "model.json")
    with open(d / "scenario.jsonl", "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=50, seed=1, pages=10)), f)
    paths = {"model": d / "model.json", "scenario": d / "scenario.jsonl",
             "truncated_scenario": d / "truncated.jsonl"}
    text = paths["scenario"].read_bytes()
    paths["truncated_scenario"].write_bytes(text[:len(text) * 2 // 3])
    for kind, data in BAD.items():
        if data is not None:
            suffix = ".csv" if "csv" in kind or "results" in kind else (
                ".gz" if kind == "bad_gzip" else ".json")
            paths[kind] = d / f"{kind}{suffix}"
            paths[kind].write_bytes(data)
    return paths


CASES = [(name, k, kind) for name, invs in INVOCATIONS.items() for k, (_, ok) in enumerate(invs)
         for kind in BAD if kind not in ok]


@pytest.mark.parametrize("name, k, kind", CASES)
def test_a_bad_file_is_one_line_and_exit_2(tmp_path, files, name, k, kind):
    args, _ = INVOCATIONS[name][k]
    good = str(files["scenario"])
    argv = [{"F": str(files[kind]), "G": good, "PORT": str(free_port())}.get(a, a) for a in args]
    r = CliRunner().invoke(main, argv, catch_exceptions=True)
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert r.exit_code == 2 and isinstance(r.exception, (SystemExit, type(None))), \
        (r.exit_code, r.output, repr(r.exception))
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    named = {"model": "a wagon model", "scenario": "a wagon scenario",
             "results": "replay results"}.get(kind)
    assert named is None or f"{named}, not " in lines[0], lines[0]      # the wrong kind, named


@pytest.mark.parametrize("argv", [
    ["synth", "MODEL", "--sessions", "3", "-o", "OUT"],
    ["export", "SCENARIO", "--to", "httperf", "-o", "OUT"],
    ["report", "SCENARIO", "-o", "OUT"],
    ["fit", "LOG", "-o", "OUT"]])
def test_an_output_in_a_missing_folder_is_one_line_and_exit_2(tmp_path, files, nasa, argv):
    """(``synth`` asked the missing folder for its free space first: a traceback.)"""
    argv = [{"MODEL": str(files["model"]), "SCENARIO": str(files["scenario"]), "LOG": str(nasa),
             "OUT": str(tmp_path / "missing" / "out")}.get(a, a) for a in argv]
    r = CliRunner().invoke(main, argv, catch_exceptions=True)
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert lines[-1].startswith("Error: cannot write") and len(lines) == 1, r.output
