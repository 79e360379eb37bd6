"""What every command promises: ``--json`` output and written JSON files are strict JSON (no
NaN, no Infinity), and ``--help`` describes every option and shows its default. Commands are
walked from the click group, so a new command or option cannot escape."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
UNSET = getattr(click.core, "UNSET", None)        # click ≥ 8.2: a required option's default
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.model import save_model
from wagon.synth import Generator, SynthOptions, synthesize

from .servers import free_port, wait_port
from .test_bad_inputs import FILELESS, INVOCATIONS, commands
from .test_synth import hand_model, model_and_scenario

#: a --json invocation of every command that has --json (M model, S scenario, L log, R results
#: of a replay of S, T the target serving S); the replay is the one that writes R
JSON_RUNS = {
    "fit": ["fit", "L", "-o", "fitted.json", "--json"],
    "synth": ["synth", "M", "-o", "s2.jsonl", "--sessions", "20", "--json"],
    "replay": ["replay", "S", "--target", "T", "--results", "R", "--json", "--quiet"],
    "sweep": ["sweep", "S", "--target", "T", "--rates", "1", "--step-time", "2", "--warmup", "0",
              "--json"],
    "hurst": ["hurst", "S", "--json"],
    "compare": ["compare", "S", "R", "--json"],
    "advise keepalive": ["advise", "keepalive", "--model", "M", "--delta", "0.4", "--json"],
}


def command(name: str) -> click.Command:
    cmd = main
    for part in name.split():
        cmd = cmd.get_command(click.Context(cmd), part)
    return cmd


def strict(text: str):
    """json.loads that refuses NaN and ±Infinity (Python's own reader accepts them)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON constant {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("contract")
    model = hand_model(think=(-1.5, 0.5), rate=10.0, clicks_p=0.6)     # short sessions
    save_model(model, d / "m.json")
    with open(d / "s.jsonl", "w") as f:
        synthesize(Generator(model, SynthOptions(duration=3, seed=2, pages=20,
                                                 classes="lan/http11")), f)
    r = CliRunner().invoke(main, ["export", str(d / "s.jsonl"), "--to", "clf", "-o",
                                  str(d / "s.log")])
    assert r.exit_code == 0, r.output
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--scenario",
                               str(d / "s.jsonl"), "--port", str(port), "--max-time", "90"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    paths = {"M": str(d / "m.json"), "S": str(d / "s.jsonl"), "L": str(d / "s.log"),
             "R": str(d / "r.csv"), "T": f"http://127.0.0.1:{port}/"}
    replayed = CliRunner().invoke(main, [paths.get(a, a) for a in JSON_RUNS["replay"]])
    assert replayed.exit_code == 0, replayed.output
    yield paths | {"dir": d, "replay": replayed}
    server.terminate()
    server.wait(10)


def test_every_json_command_is_run():
    with_json = {n for n in commands(main) if any(p.name == "as_json" for p in command(n).params)}
    assert with_json == set(JSON_RUNS)


@pytest.mark.parametrize("name", sorted(JSON_RUNS))
def test_json_output_is_strict(world, name, monkeypatch):
    monkeypatch.chdir(world["dir"])
    if name == "replay":                               # the world's replay: it wrote R
        r = world["replay"]
    else:
        r = CliRunner().invoke(main, [world.get(a, a) for a in JSON_RUNS[name]])
    assert r.exit_code == 0, r.output
    strict(r.stdout if hasattr(r, "stdout") else r.output)


def test_written_json_is_strict(world, monkeypatch):
    """The model, the run file, and the header of every scenario."""
    monkeypatch.chdir(world["dir"])
    d = world["dir"]
    assert CliRunner().invoke(main, ["fit", world["L"], "-o", "f.json"]).exit_code == 0
    strict((d / "f.json").read_text())
    strict((d / "r.run.json").read_text())
    for s in (world["S"], d / "s2.jsonl"):
        if s and (d / s).exists():
            strict(open(d / s).readline())


def options(name: str) -> list[click.Option]:
    return [p for p in command(name).params if isinstance(p, click.Option)]


@pytest.mark.parametrize("name", sorted(commands(main)))
def test_help_describes_every_option_and_its_default(name):
    cmd = command(name)
    assert cmd.help and cmd.help.strip(), name
    for p in options(name):
        assert p.help and p.help.strip(), f"{name} {p.opts[0]}: no help"
        default = p.get_default(click.Context(cmd), call=False)
        has_default = (default not in (None, UNSET) and not p.required and not p.is_flag
                       and not p.multiple)
        if has_default:
            assert p.show_default, f"{name} {p.opts[0]}: default {default!r} not shown"
    r = CliRunner().invoke(main, name.split() + ["--help"])
    assert r.exit_code == 0 and "Usage:" in r.output


def test_the_program_flushes_its_output_and_keeps_exit_statuses(tmp_path):
    """``python -m wagon`` (``run``) leaves without tearing down its modules: what it printed
    to a pipe is all there, and the exit statuses are click's (0 done, 2 bad input)."""
    nasa = Path(__file__).parent / "data" / "nasa-aug95-morning.log.gz"
    r = subprocess.run([sys.executable, "-m", "wagon", "fit", str(nasa), "-o",
                        str(tmp_path / "m.json"), "--json", "--workers", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert strict(r.stdout)["model"] == str(tmp_path / "m.json")   # the whole JSON, parsed
    bad = subprocess.run([sys.executable, "-m", "wagon", "fit", str(tmp_path / "none.log")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [f"Error: {tmp_path / 'none.log'}: No such file "
                                               "or directory"]
    usage = subprocess.run([sys.executable, "-m", "wagon", "fit", "--no-such-option"],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "No such option" in usage.stderr


def _numeric(name: str) -> list[click.Option]:
    return [p for p in options(name)
            if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType))]


NUMERIC = [(name, p.opts[0]) for name in sorted(commands(main)) for p in _numeric(name)]
#: values no numeric option may take: not numbers, not finite, or beyond any sane range
ABSURD = {"float": ["nan", "inf", "-inf", "1e308", "-1e308"], "int": ["nan", str(10**30),
                                                                      str(-10**30)]}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A model and a scenario, for the commands that read one before checking an option."""
    return model_and_scenario(tmp_path_factory.mktemp("numeric"), sessions=5, pages=5)


def _argv(name: str, flag: str, inputs: dict, tmp_path) -> list[str]:
    """A valid invocation of ``name`` without ``flag`` (test_bad_inputs' first one)."""
    if name in FILELESS:
        return ["demo", "--outdir", str(tmp_path / "d")]
    args, accepted = INVOCATIONS[name][0]
    files = {"F": inputs.get(next(iter(accepted), ""), inputs["scenario"]),
             "G": inputs["scenario"], "PORT": "0"}
    if flag in args:                                   # serve's --max-time: given below
        k = args.index(flag)
        args = args[:k] + args[k + 2:]
    return [files.get(a, a) for a in args]


@pytest.mark.parametrize("name, flag", NUMERIC)
def test_every_numeric_option_refuses_values_out_of_its_range(tmp_path, inputs, name, flag):
    """Each numeric option of each command, given NaN, infinities or absurd magnitudes: exit 2
    and an error naming the option, before anything runs (nothing written), no traceback."""
    option = next(p for p in _numeric(name) if p.opts[0] == flag)
    kind = "int" if isinstance(option.type, click.types.IntParamType) else "float"
    for value in ABSURD[kind]:
        r = CliRunner().invoke(main, _argv(name, flag, inputs, tmp_path) + [flag, value])
        assert r.exit_code == 2 and isinstance(r.exception, (SystemExit, type(None))), \
            (value, r.output, repr(r.exception))
        assert flag in r.output and "Traceback" not in r.output, (value, r.output)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv", [
    ["replay", "S", "--target", "http://127.0.0.1:9/", "--results", ""],
    ["replay", "S", "--target", "http://127.0.0.1:9/", "--protocol", ""],
    ["replay", "S", "--target", "http://127.0.0.1:9/", "--source-addresses", ""],
    ["replay", "S", "--target", "http://127.0.0.1:9/", "--ca-file", ""],
    ["sweep", "S", "--target", "http://127.0.0.1:9/", "--protocol", ""],
    ["sweep", "S", "--target", "http://127.0.0.1:9/", "--plot", ""],
    # these served, wrote or built into the current folder, or drew no plots, saying nothing
    ["serve", "--port", "0", "--max-time", "0.2", "--site", ""],
    ["serve", "--scenario", "S", "--port", "0", "--max-time", "0.2", "--access-log", ""],
    ["demo", "--outdir", ""],
    ["fit", "L", "-o", "M", "--plots", ""]])
def test_an_empty_option_is_refused_not_taken_for_its_absence(tmp_path, argv):
    """An empty value (an unset shell variable: --results "$OUT") is refused, exit 2, before
    anything runs: it was taken for the option's absence (a replay that wrote no results, no
    protocol override, the system's CAs), said nowhere."""
    with open(tmp_path / "s.jsonl", "w") as f:
        synthesize(Generator(hand_model(), SynthOptions(sessions=20, pages=5)), f)
    (tmp_path / "a.log").write_text('10.0.0.1 - - [01/Aug/2001:10:00:00 +0000] "GET / '
                                    'HTTP/1.0" 200 5 "-" "Mozilla/4.0"\n')
    files = {"S": str(tmp_path / "s.jsonl"), "L": str(tmp_path / "a.log"),
             "M": str(tmp_path / "m.json")}
    r = CliRunner().invoke(main, [files.get(a, a) for a in argv])
    assert r.exit_code == 2 and "an empty value" in r.output and argv[-2] in r.output, r.output
    assert not (tmp_path / "m.json").exists()


def test_an_empty_site_folder_is_refused_not_taken_for_the_current_one(tmp_path, monkeypatch):
    """'wagon site build "$DIR" --scenario S' with DIR unset wrote the site's pages into the
    current folder."""
    with open(tmp_path / "s.jsonl", "w") as f:
        synthesize(Generator(hand_model(), SynthOptions(sessions=3, pages=5)), f)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["site", "build", "", "--scenario", "s.jsonl"])
    assert r.exit_code == 2 and "OUTDIR" in r.output and "an empty value" in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_serve_accepts_the_least_backlog_its_help_states(tmp_path):
    """'wagon serve --help' said --backlog [0<=x<=1000000] and 'wagon serve --backlog 0' then
    said '--backlog must be at least 1'. The least value the help states is served (0.2 s on a
    free loopback port); one below it is refused by the range."""
    option = next(p for p in options("serve") if p.opts[0] == "--backlog")
    low = option.type.min
    argv = ["serve", "--site", str(tmp_path), "--port", "0", "--max-time", "0.2", "--backlog"]
    assert CliRunner().invoke(main, argv + [str(low)]).exit_code == 0
    r = CliRunner().invoke(main, argv + [str(low - 1)])
    assert r.exit_code == 2 and f"{low}<=x" in r.output, r.output
