"""Fault audit (issue 36's closing counts): every fault kind of the issue run against the real
parts — ``wagon`` commands in processes of their own, nginx, ``wagon serve`` and the tests'
fault server on loopback, ``--network packet`` where root — and counted per area: tried, clean,
failed, and what failed.

Areas: (a) faulty servers (tests/servers.py's fault server: resets, stalls, short bodies,
closes, redirects, ...; a port that refuses after the pre-flight; a slow body; a request cap),
(b) signals: SIGKILL and SIGSTOP of a replay's worker, relay, cluster worker and parent,
SIGINT and SIGTERM of each long-running command, (c) ``wagon recover`` after a parent's
SIGKILL, (d) crafted files (bench/mutations_audit.py's counts), (e) endless inputs (/dev/zero,
a FIFO, a huge line; a log's FIFO no writer opens) for every command that reads a file, (f) a full disk (RLIMIT_FSIZE, as
tests/test_disk_full.py) for every command that writes, (g) each command's exit statuses
against the table (wagon.exits).

Clean means: the documented exit status, at most one line on stderr (a replay's summary
aside), no traceback, nothing left behind (no process of the run, no file in its TMPDIR or
beside its output but what it publishes), and, where a replay is involved, every request due
accounted for (tests/test_watchdog.py's ``_accounted``: one row per request of every session,
the summary's counts equal to the rows').

    python bench/faults_audit.py [--areas a,b,c,d,e,f,g] [--examples 40]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.procs import alive, children, cmdline  # noqa: E402
from tests.servers import _Fault, fault_server, nginx, write_scenario_file  # noqa: E402
from tests.test_netpath import _relay_of  # noqa: E402
from tests.test_recipe_mutations import VALID, toml  # noqa: E402
from tests.test_replay import big_site, refusing_after_preflight  # noqa: E402
from tests.test_synth import hand_model  # noqa: E402
from tests.test_watchdog import _accounted, _playing  # noqa: E402
from wagon import exits  # noqa: E402
from wagon.formats.model import save_model  # noqa: E402
from wagon.formats.site import build_site  # noqa: E402
from wagon.synth import Generator, SynthOptions, synthesize  # noqa: E402
from wagon.synth.site import resolve_site  # noqa: E402

NASA = ROOT / "tests" / "data" / "nasa-aug95-morning.log.gz"
#: a progress line (fit's "wagon: parsing 50% (...)"): not a message
PROGRESS = re.compile(r"wagon: [a-z ]+ \d+% \(")
INTERRUPTED = "Error: interrupted: stopped before the end; no file was written half"
CASES: dict[str, list[tuple[str, Callable[[Path], str | None]]]] = defaultdict(list)
AREAS = {"a": "faulty servers", "b": "signals", "c": "recover after a parent's SIGKILL",
         "d": "crafted files", "e": "endless inputs", "f": "disk full", "g": "exit statuses"}


class Failed(Exception):
    """A case that was not clean (its message says why)."""


def case(area: str, kind: str):
    """Register ``fn(work) -> None`` (clean) as a case of ``area``; it raises Failed or
    AssertionError (tests' checks) when not clean."""
    def add(fn):
        CASES[area].append((kind, fn))
        return fn
    return add


# ---- running wagon ----------------------------------------------------------------------------
def wagon(args: list[str], cwd: Path, **kwargs) -> subprocess.Popen:
    """``wagon ARGS`` in ``cwd``, its temporary files in ``cwd/tmp`` (checked empty after)."""
    (cwd / "tmp").mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "wagon", *map(str, args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(cwd / "tmp")}, **kwargs)


def finish(p: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    """Its status, stdout and stderr; Failed if it does not end within ``timeout``."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Failed(f"still running after {timeout:g} s (killed)") from None
    return p.returncode, out, err


def descendants(pid: int) -> list[int]:
    """Every running process under ``pid`` (the kernel's view)."""
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


def gone(pids: list[int], wait: float = 10.0) -> list[int]:
    """The ``pids`` still there after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def judge(got: tuple[int, str, str], want: int, cwd: Path, keep: set[str] = frozenset(),
          lines: int = 1, procs: list[int] = ()) -> None:
    """Failed unless clean: status ``want``, at most ``lines`` lines on stderr, no traceback,
    TMPDIR empty, nothing in ``cwd`` but ``keep`` (and what was there: the inputs, named
    ``in*``), no process of ``procs`` left."""
    rc, _, err = got
    said = [line for line in err.strip().splitlines() if not PROGRESS.match(line)]
    last = (said or ["(nothing)"])[-1][:160]
    if "Traceback" in err:
        raise Failed(f"a traceback: {last}")
    if rc != want:
        raise Failed(f"exit {rc}, not {want}: {last}")
    if len(said) > lines:
        raise Failed(f"{len(said)} lines on stderr: {last}")
    left = os.listdir(cwd / "tmp") if (cwd / "tmp").exists() else []
    left += [n for n in os.listdir(cwd) if n != "tmp" and not n.startswith("in")
             and n not in keep]
    if left:
        raise Failed(f"left behind: {sorted(left)[:5]}")
    if gone(list(procs)):
        raise Failed(f"processes left: {gone(list(procs), 0)}")


# ---- inputs -------------------------------------------------------------------------------------
def scenario_for(work: Path, pages: list[tuple[str, int, list[int]]], sessions: list,
                 classes=("lan/http11",)) -> Path:
    return write_scenario_file(work / "in.jsonl", pages, [], list(classes), sessions)


def played_scenario(work: Path, sessions: int = 300) -> Path:
    """tests/test_watchdog.py's run: 300 sessions at 30/s of a hand model, its site built."""
    model = hand_model(think=(-1.0, 0.3), rate=30.0, clicks_p=0.34)
    scenario = work / "in.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=sessions, seed=3, pages=40,
                                                 classes="lan/http11")), f)
    build_site(resolve_site(model, pages=40).spec, work / "insite")
    return scenario


def nasa_log(size: int) -> bytes:
    """The first ``size`` bytes of the NASA log, whole lines."""
    with gzip.open(NASA, "rb") as f:
        log = f.read(size)
    return log[:log.rfind(b"\n") + 1]


class Shared:
    """Inputs made once: a model (m.json), a scenario of it, a small replay's results."""

    def __init__(self, work: Path) -> None:
        self.dir = work / "shared"
        self.dir.mkdir()
        save_model(hand_model(), self.dir / "m.json")
        with open(self.dir / "s.jsonl", "w") as f:
            synthesize(Generator(hand_model(), SynthOptions(sessions=40, seed=1, pages=20)), f)
        build_site(resolve_site(hand_model(), pages=20).spec, self.dir / "site")
        (self.dir / "log").write_bytes(nasa_log(2 << 20))
        with nginx(self.dir / "site", self.dir / "ng") as server:
            p = wagon(["replay", self.dir / "s.jsonl", "--target", server.url, "--results",
                       self.dir / "r.csv", "--quiet", "--max-time", "3"], self.dir)
            assert finish(p)[0] == 0
        (self.dir / "recipe.toml").write_text(toml(VALID))

    def __getitem__(self, name: str) -> Path:
        return self.dir / name


SHARED: list[Shared] = []


# ---- (a) faulty servers ------------------------------------------------------------------------
#: fault server path → the outcome its request must record (tests/servers.py's _Fault)
FAULTS = {"/ok": "", "/500": "http_5xx", "/reset": "reset", "/truncate": "truncated",
          "/hang": "timeout", "/close": "closed", "/redirect": "", "/redirect-rel": "",
          "/loop": "too_many_redirects", "/away": "", "/once": ""}


def replay_rows(work: Path, target: str, want: str, *extra: str, path: str = "") -> None:
    """``wagon replay`` of in.jsonl against ``target``: clean (exit 0, or 4 when ``want`` is
    an error: the default --fail-on errors>1 %), every request a row (each session's),
    ``want`` among the outcomes of the requests for ``path``."""
    from wagon import read_results
    got = finish(wagon(["replay", work / "in.jsonl", "--target", target, "--results",
                        "r.csv", "--quiet", "--timeout", "1", *extra], work), 60)
    judge(got, exits.EXIT_THRESHOLDS if want else exits.EXIT_OK, work,
          {"r.csv", "r.pages.csv", "r.run.json", "big", "ng"})
    rows = read_results(work / "r.csv")
    summary = rows.attrs["run"]["summary"]
    if summary["requests"]["total"] != len(rows):
        raise Failed(f"{len(rows)} rows, the summary says {summary['requests']['total']}")
    mine = set(rows.error[rows.url.str.startswith(path)]) if path else set(rows.error)
    if want not in mine:
        raise Failed(f"outcomes {sorted(mine)}, not {want!r}")


def _fault_case(path: str, want: str) -> None:
    @case("a", f"server {path}")
    def run(work: Path) -> None:
        scenario_for(work, [(path, 10, []), ("/ok", 10, [])],
                     [(0.0, 0, [(0, 0.0), (1, 0.0)]), (0.05, 0, [(0, 0.0)])])
        with fault_server() as port:
            replay_rows(work, f"http://127.0.0.1:{port}/", want, path=path)


for _path, _want in FAULTS.items():
    _fault_case(_path, _want)


@case("a", "refused after the pre-flight")
def _refused(work: Path) -> None:
    scenario_for(work, [("/ok", 10, [])], [(0.3, 0, [(0, 0.0)])], ("lan/http10x1",))
    with refusing_after_preflight() as url:
        replay_rows(work, url, "refused")


def slow_body(work: Path, want: str, *limit: str) -> None:
    """12.5 kB from nginx at 40 kbit/s (2.5 s) under ``limit``; ``want`` its outcome."""
    site = big_site(work, 12_500)
    scenario_for(work, [("/big.bin", 12_500, [])], [(0.0, 0, [(0, 0.0)])],
                 ("0ms-40kbps/http11",))
    with nginx(site, work / "ng") as server:
        replay_rows(work, server.url, want, *limit)
    shutil.rmtree(work / "ng")
    shutil.rmtree(site)


case("a", "slow body (40 kbit/s, 2.5 s) under a 0.5 s inactivity timeout")(
    lambda work: slow_body(work, "", "--timeout", "0.5"))
case("a", "a request cap of 1 s on a 2.5 s body")(
    lambda work: slow_body(work, "request_timeout", "--request-timeout", "1"))


# ---- (b, c) signals to a replay's processes ------------------------------------------------------
def lost_process(work: Path, extra: list[str], victim: Callable[[int, list[int]], int],
                 sig: int, want: str, bound: float = 1.0) -> None:
    """A replay of ``played_scenario`` against nginx; once it plays, ``sig`` to
    ``victim(run pid, its processes)``: exit 5 within bounds, the victim named in
    ``dead_processes`` with the cause ``want``, every due request accounted for, nothing
    left."""
    scenario = played_scenario(work)
    results = work / "r.csv"
    with nginx(work / "insite", work / "ng") as server:
        p = wagon(["replay", scenario, "--target", server.url, "--results", results, "--json",
                   "--watchdog", str(bound), *extra], work)
        if "--cluster" in extra:                        # the run file waits from t0
            deadline = time.monotonic() + 60
            while not (work / "r.run.json.part").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.0)                             # both segments play
        else:
            _playing(results, 2 if "--workers" in extra else 1)
        procs = descendants(p.pid)
        pid = victim(p.pid, procs)
        os.kill(pid, sig)
        cut = time.time()
        got = finish(p, 60)
    shutil.rmtree(work / "ng")
    judge(got, exits.EXIT_INCOMPLETE, work, {"r.csv", "r.pages.csv", "r.run.json"},
          lines=50, procs=procs + [pid])
    summary = json.loads(got[1])
    named = [(d["pid"], d["cause"]) for d in summary.get("dead_processes", [])]
    if not any(k == pid and want in c for k, c in named):
        raise Failed(f"dead_processes {named}, not {pid} {want!r}")
    _accounted(results, scenario, summary, cut)


def _worker(_pid: int, procs: list[int]) -> int:
    return next(k for k in procs if b"spawn_main" in cmdline(k))


def _relay(pid: int, _procs: list[int]) -> int:
    return _relay_of(pid)


PACKET = os.geteuid() == 0 and os.path.exists("/dev/net/tun")
for _sig, _cause in ((signal.SIGKILL, "killed by signal 9"), (signal.SIGSTOP, "silent for")):
    _name = signal.Signals(_sig).name
    case("b", f"{_name} of a replay worker (--workers 2)")(
        lambda work, s=_sig, c=_cause: lost_process(work, ["--workers", "2"], _worker, s, c))
    if PACKET:
        case("b", f"{_name} of the packet relay (--network packet)")(
            lambda work, s=_sig, c=_cause: lost_process(work, ["--network", "packet"],
                                                        _relay, s, c))
case("b", "SIGSTOP of a cluster worker (--cluster local:2)")(
    lambda work: lost_process(work, ["--cluster", "local:2", "--quiet"], _worker,
                              signal.SIGSTOP, "silent for", bound=2.0))


def lost_parent(work: Path, extra: list[str], how: str) -> None:
    """A replay's parent killed (``how``: "SIGKILL", "SIGKILL, a worker stopped") or stopped
    once it plays: none of its processes remains, and ``wagon recover`` settles every due
    request (exit 5, one line)."""
    scenario = played_scenario(work)
    results = work / "r.csv"
    with nginx(work / "insite", work / "ng") as server:
        p = wagon(["replay", scenario, "--target", server.url, "--results", results, "--json",
                   "--watchdog", "1", *extra], work)
        _playing(results, 2 if "--workers" in extra else 1)
        procs = descendants(p.pid)
        if "stopped" in how:
            os.kill(_worker(p.pid, procs), signal.SIGSTOP)
        os.kill(p.pid, signal.SIGSTOP if how == "SIGSTOP" else signal.SIGKILL)
        cut = time.time()
        if gone(procs + [p.pid], 15):
            raise Failed(f"processes left: {gone(procs + [p.pid], 0)}")
        finish(p, 30)
    shutil.rmtree(work / "ng")
    got = finish(wagon(["recover", results], work), 60)
    judge(got, exits.EXIT_INCOMPLETE, work, {"r.csv", "r.pages.csv", "r.run.json"})
    from wagon import read_results
    rows = read_results(results)
    if rows.attrs["run"]["summary"]["stopped_by"] != "parent_died":
        raise Failed(f"stopped_by {rows.attrs['run']['summary']['stopped_by']}")
    _accounted(results, scenario, rows.attrs["run"]["summary"], cut)


case("b", "SIGSTOP of a replay's parent (--workers 2)")(
    lambda work: lost_parent(work, ["--workers", "2"], "SIGSTOP"))
case("c", "SIGKILL of a one-process replay, then recover")(
    lambda work: lost_parent(work, [], "SIGKILL"))
case("c", "SIGKILL of a replay's parent (--workers 2), then recover")(
    lambda work: lost_parent(work, ["--workers", "2"], "SIGKILL"))
case("c", "SIGKILL of the parent with a worker stopped, then recover")(
    lambda work: lost_parent(work, ["--workers", "2"], "SIGKILL, a worker stopped"))


# ---- (b) SIGINT and SIGTERM of each long-running command -----------------------------------------
def _fed(p: subprocess.Popen, size: int) -> None:
    """Write ``size`` bytes of log to ``p``'s stdin: they return once it read most (it runs)."""
    p.stdin.write(nasa_log(size).decode())
    p.stdin.flush()


def _fifo_fed(work: Path, size: int) -> Callable[[subprocess.Popen], None]:
    """A FIFO ``in.fifo`` (the command's input) and a writer that feeds it ``size`` bytes of
    log and keeps it open until the command ends."""
    os.mkfifo(work / "in.fifo")

    def feed(p: subprocess.Popen) -> None:
        w = open(work / "in.fifo", "wb")
        w.write(nasa_log(size))
        w.flush()
        threading.Thread(target=lambda: (p.wait(), w.close()), daemon=True).start()
    return feed


def _said(p: subprocess.Popen) -> None:
    """Wait for the command's first line on stderr (it runs)."""
    p.stderr.readline()


def _served(n: int) -> Callable[[subprocess.Popen], None]:
    def wait(p: subprocess.Popen) -> None:
        deadline = time.monotonic() + 30
        while len(_Fault.served) < n and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    return wait


def interrupt(work: Path, args: list, running: Callable[[subprocess.Popen], None], sig: int,
              want: int = exits.EXIT_INCOMPLETE, keep: set[str] = frozenset(),
              lines: int = 1, group: bool = False, **kwargs) -> None:
    """``sig`` to the command once ``running`` says it runs (to its process group, as a
    terminal's Ctrl-C, when ``group``): clean, and its interrupted line said."""
    p = wagon(args, work, start_new_session=group, **kwargs)
    running(p)
    procs = descendants(p.pid)
    if group:
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    got = finish(p, 60)
    if want == exits.EXIT_INCOMPLETE and args[0] not in ("replay", "sweep") and \
            INTERRUPTED not in got[2]:            # replay and sweep: their summary says it
        raise Failed(f"no interrupted line: {got[2].strip()[-160:]}")
    judge(got, want, work, keep, lines, procs)


def _signal_cases(sig: int) -> None:
    name = signal.Signals(sig).name
    hang = [("/hang", 10, [])]
    case("b", f"{name} of fit (log on stdin)")(lambda work: interrupt(
        work, ["fit", "-", "-o", "m.json"], lambda p: _fed(p, 4 << 20), sig,
        stdin=subprocess.PIPE))
    case("b", f"{name} of fit --workers 2 (log on stdin)")(lambda work: interrupt(
        work, ["fit", "-", "-o", "m.json", "--workers", "2"], lambda p: _fed(p, 4 << 20), sig,
        stdin=subprocess.PIPE))
    case("b", f"{name} of compare (a FIFO)")(lambda work: interrupt(
        work, ["compare", "in.fifo", NASA], _fifo_fed(work, 1 << 20), sig))
    case("b", f"{name} of hurst (a FIFO)")(lambda work: interrupt(
        work, ["hurst", "in.fifo"], _fifo_fed(work, 1 << 20), sig))
    case("b", f"{name} of synth")(lambda work: interrupt(
        work, ["synth", SHARED[0]["m.json"], "--sessions", "10000000", "-o", "s.jsonl"], _said,
        sig))

    def replaying(work: Path, command: list[str]) -> None:
        scenario_for(work, hang, [(0.1 * i, 0, [(0, 0.0)]) for i in range(40)])
        with fault_server() as port:
            interrupt(work, [*command, "--target", f"http://127.0.0.1:{port}/"], _served(3),
                      sig, keep={"r.csv", "r.pages.csv", "r.run.json"}, lines=50)
    case("b", f"{name} of replay")(lambda work: replaying(
        work, ["replay", "in.jsonl", "--results", "r.csv", "--quiet"]))
    case("b", f"{name} of replay --workers 2")(lambda work: replaying(
        work, ["replay", "in.jsonl", "--results", "r.csv", "--quiet", "--workers", "2"]))
    case("b", f"{name} of sweep")(lambda work: replaying(
        work, ["sweep", "in.jsonl", "--rates", "1", "--step-time", "2"]))
    case("b", f"{name} of serve (its normal stop: 0)")(lambda work: interrupt(
        work, ["serve", "--model", SHARED[0]["m.json"], "--port", "0"], _said, sig,
        want=exits.EXIT_OK))


_signal_cases(signal.SIGINT)
_signal_cases(signal.SIGTERM)
case("b", "Ctrl-C (SIGINT to its process group) of fit --cluster local:2")(
    lambda work: interrupt(work, ["fit", NASA, ROOT / "tests" / "data" /
                                  "epa-http-aug95-half.log.gz", "-o", "m.json", "--cluster",
                                  "local:2"], lambda p: time.sleep(6), signal.SIGINT,
                           group=True))


# ---- (d) crafted files -----------------------------------------------------------------------------
def crafted(work: Path, examples: int) -> list[tuple[str, int, int, list[str]]]:
    """bench/mutations_audit.py's counts per format: (format, tried, clean, what failed)."""
    out = work / "mutations.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "mutations_audit.py"),
                        "--examples", str(examples), "--json", str(out)],
                       capture_output=True, text=True, cwd=work)
    if r.returncode != 0:
        return [("mutations_audit", 1, 0, [r.stderr.strip()[-300:]])]
    rows = []
    for f in json.loads(out.read_text()):
        tried = clean = 0
        failed = []
        for command, k in f["counts"].items():
            tried += k.get("tried", 0)
            clean += k.get("clean error", 0) + k.get("valid accepted", 0)
            failed += [f"{command}: {n} {what}" for what, n in k.items()
                       if what in ("traceback", "silently accepted") or
                       what.startswith(("exit", "unclean"))]
        failed += [f"{key}: {json.dumps(x, default=str)[:200]}"
                   for key, x in f["notes"].items() if not key.endswith("valid accepted")]
        rows.append((f"{f['format']} ({f['mutants']} mutants)", tried, clean, failed))
    return rows


# ---- (e) endless inputs ------------------------------------------------------------------------------
#: command → its arguments, X the input under test
READERS = {"fit": ["fit", "X", "-o", "m.json"], "compare": ["compare", "X", "LOG"],
           "hurst": ["hurst", "X"],
           "synth": ["synth", "X", "--sessions", "5", "-o", "s.jsonl"],
           "serve --model": ["serve", "--model", "X", "--port", "0", "--max-time", "3"],
           "serve --scenario": ["serve", "--scenario", "X", "--port", "0", "--max-time", "3"],
           "replay": ["replay", "X", "--target", "http://127.0.0.1:9/"],
           "report": ["report", "X", "-o", "r.html"],
           "export": ["export", "X", "--to", "clf", "-o", "x.log"],
           "site build": ["site", "build", "--scenario", "X", "out"],
           "advise keepalive": ["advise", "keepalive", "--model", "X"],
           "experiment": ["experiment", "X", "--dry-run"],
           "recover": ["recover", "X"]}
LOGS = {"fit", "compare", "hurst"}


def endless(work: Path, command: str, what: str) -> None:
    args = [str(SHARED[0]["log"]) if a == "LOG" else a for a in READERS[command]]
    feed = None
    if what == "/dev/zero":
        x = "/dev/zero"
    elif what.startswith("a FIFO"):
        x = str(work / "in.fifo")
        os.mkfifo(x)
        # a log may come down a pipe: 64 MiB of zeros, closed; the others have no writer
        if what == "a FIFO" and command in LOGS:
            def feed():
                with open(x, "wb") as w:
                    for _ in range(64):
                        w.write(bytes(1 << 20))
    else:                                # one line of 64 MiB, no line end
        x = str(work / "in-huge")
        with open(x, "wb") as f:
            f.write(b"x" * (64 << 20))
    p = wagon([x if a == "X" else a for a in args], work)
    if feed:
        threading.Thread(target=feed, daemon=True).start()
    judge(finish(p, 60), exits.EXIT_BAD_INPUT, work)


for _command in READERS:
    for _what in ("/dev/zero", "a FIFO", "a huge line") + (
            ("a FIFO no writer opens",) if _command in LOGS else ()):
        case("e", f"{_command}: {_what}")(lambda work, c=_command, w=_what: endless(work, c, w))


# ---- (f) a full disk ---------------------------------------------------------------------------------
def _limited(limit: int) -> Callable[[], None]:
    def set_limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)        # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


#: command → its arguments (OUT: the output, there before with OLD) and the file-size limit
WRITERS = {"fit": (["fit", "LOG", "-o", "OUT", "--workers", "1"], 2_000),
           "synth": (["synth", "M", "--sessions", "3000", "-o", "OUT"], 50_000),
           "report": (["report", "M", "-o", "OUT"], 20_000),
           "export": (["export", "S", "--to", "clf", "-o", "OUT"], 20_000),
           "site build": (["site", "build", "--scenario", "S", "OUT"], 2_000)}
OLD = b"what was there before\n"


def full(work: Path, command: str) -> None:
    args, limit = WRITERS[command]
    sh = SHARED[0]
    out = work / ("out" if command != "site build" else "outdir")
    if command == "site build":
        out.mkdir()
        (out / "old").write_bytes(OLD)
    else:
        out.write_bytes(OLD)
    names = {"LOG": sh["log"], "M": sh["m.json"], "S": sh["s.jsonl"], "OUT": out}
    got = finish(wagon([names.get(a, a) for a in args], work, preexec_fn=_limited(limit)))
    if "the disk is full" not in got[2]:
        raise Failed(f"no 'the disk is full': {got[2].strip()[-160:]}")
    judge(got, exits.EXIT_DISK_FULL, work, {out.name})
    if command != "site build" and out.read_bytes() != OLD:
        raise Failed("the old file changed")


for _command in WRITERS:
    case("f", _command)(lambda work, c=_command: full(work, c))


@case("f", "replay, then recover with room")
def _full_replay(work: Path) -> None:
    scenario = played_scenario(work, sessions=300)
    (work / "r.csv").write_bytes(OLD)
    with nginx(work / "insite", work / "ng") as server:
        got = finish(wagon(["replay", scenario, "--target", server.url, "--results", "r.csv",
                            "--quiet"], work, preexec_fn=_limited(8_000)), 120)
    shutil.rmtree(work / "ng")
    if got[0] != exits.EXIT_DISK_FULL or "Traceback" in got[2]:
        raise Failed(f"exit {got[0]}: {got[2].strip()[-160:]}")
    if (work / "r.csv").read_bytes() != OLD:
        raise Failed("the old results changed")
    got = finish(wagon(["recover", "r.csv"], work), 60)
    judge(got, exits.EXIT_INCOMPLETE, work, {"r.csv", "r.pages.csv", "r.run.json"})
    from wagon import read_results
    rows = read_results(work / "r.csv")
    if rows.attrs["run"]["summary"]["stopped_by"] != "disk_full":
        raise Failed(f"stopped_by {rows.attrs['run']['summary']['stopped_by']}")


# ---- (g) exit statuses per command ----------------------------------------------------------------
def status(work: Path, args: list, want: int, keep: set[str] = frozenset(), lines: int = 1,
           target: str | None = None) -> None:
    sh = SHARED[0]
    names = {"LOG": sh["log"], "M": sh["m.json"], "S": sh["s.jsonl"], "R": sh["r.csv"],
             "RECIPE": sh["recipe.toml"], "GARBAGE": work / "in-garbage", "T": target}
    (work / "in-garbage").write_bytes(bytes(range(256)) * 8)
    judge(finish(wagon([names.get(a, a) for a in args], work), 300), want, work, keep, lines)


def _unreachable() -> str:
    return "http://127.0.0.1:9/"


#: command → (arguments that run it whole, what it publishes), arguments of a bad input
STATUSES = {
    "fit": ((["fit", "LOG", "-o", "m.json", "--workers", "1"], {"m.json"}),
            ["fit", "GARBAGE", "-o", "m.json"]),
    "synth": ((["synth", "M", "--sessions", "20", "-o", "s.jsonl"], {"s.jsonl"}),
              ["synth", "GARBAGE"]),
    "site build": ((["site", "build", "--scenario", "S", "out"], {"out"}),
                   ["site", "build", "--scenario", "GARBAGE", "out"]),
    "export": ((["export", "S", "--to", "clf", "-o", "x.log"], {"x.log"}),
               ["export", "GARBAGE", "--to", "clf", "-o", "x.log"]),
    "serve": ((["serve", "--model", "M", "--port", "0", "--max-time", "1"], set()),
              ["serve", "--model", "GARBAGE"]),
    "hurst": ((["hurst", "LOG"], set()), ["hurst", "GARBAGE"]),
    "compare": ((["compare", "LOG", "LOG"], set()), ["compare", "GARBAGE", "LOG"]),
    "advise keepalive": ((["advise", "keepalive", "--model", "M", "--gain", "0.1"], set()),
                         ["advise", "keepalive", "--model", "GARBAGE"]),
    "report": ((["report", "R", "-o", "r.html"], {"r.html"}), ["report", "GARBAGE"]),
    "experiment": ((["experiment", "RECIPE", "--dry-run"], set()),
                   ["experiment", "GARBAGE", "--dry-run"]),
    "recover": (None, ["recover", "GARBAGE"]),
    "replay": ((["replay", "S", "--target", "T", "--results", "r.csv", "--quiet",
                 "--max-time", "3"],
                {"r.csv", "r.pages.csv", "r.run.json"}), ["replay", "GARBAGE", "--target", "T"]),
    "sweep": (None, ["sweep", "GARBAGE", "--target", "T", "--rates", "1"]),
}


def _status_cases() -> None:
    for command, (ok, bad) in STATUSES.items():
        if ok is not None:
            def done(work: Path, a=ok[0], keep=ok[1]) -> None:
                if "T" not in a:
                    return status(work, a, exits.EXIT_OK, keep, lines=50)
                with nginx(SHARED[0]["site"], work / "ng") as server:
                    status(work, a, exits.EXIT_OK, keep | {"ng"}, lines=50, target=server.url)
            case("g", f"{command}: 0 (done)")(done)
        case("g", f"{command}: 2 (bad input)")(
            lambda work, a=bad: status(work, a, exits.EXIT_BAD_INPUT, target=_unreachable()))
    for command in ("replay", "sweep"):
        args = [command, "S", "--target", "T", "--quiet"] if command == "replay" else \
            [command, "S", "--target", "T", "--rates", "1", "--step-time", "2"]
        case("g", f"{command}: 3 (unreachable)")(
            lambda work, a=args: status(work, a, exits.EXIT_UNREACHABLE, lines=50,
                                        target=_unreachable()))

    def thresholds(work: Path) -> None:
        with nginx(SHARED[0]["site"], work / "ng") as server:
            status(work, ["replay", "S", "--target", "T", "--quiet", "--max-time", "3", "--fail-on",
                          "request.p99>0.001"], exits.EXIT_THRESHOLDS, {"ng"}, lines=50,
                   target=server.url)
    case("g", "replay: 4 (--fail-on failed)")(thresholds)


_status_cases()


# ---- running and counting -------------------------------------------------------------------------
def run_area(area: str, work: Path) -> list[tuple[str, int, int, list[str]]]:
    """Every case of ``area``, each in a folder of its own: (kind, tried, clean, why)."""
    rows = []
    for kind, fn in CASES[area]:
        d = Path(tempfile.mkdtemp(prefix="case-", dir=work))
        t = time.monotonic()
        try:
            fn(d)
            why = None
        except Exception as e:                  # noqa: BLE001 (a case's failure, named)
            said = str(e).splitlines()[0] if str(e) else traceback.extract_tb(
                e.__traceback__)[-1].line              # a bare assert: its line
            why = f"{type(e).__name__}: {said}"[:200]
        rows.append((kind, 1, why is None, [why] if why else []))
        print(f"  {area} {kind}: {'clean' if why is None else why} "
              f"({time.monotonic() - t:.1f} s)", file=sys.stderr, flush=True)
        shutil.rmtree(d, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--areas", default="a,b,c,d,e,f,g")
    ap.add_argument("--examples", type=int, default=40,
                    help="(d) distinct mutants per format, as mutations_audit.py's.")
    args = ap.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wagon-faults-") as tmp:
        work = Path(tmp)
        SHARED.append(Shared(work))
        table = {}
        for area in args.areas.split(","):
            table[area] = (crafted(work, args.examples) if area == "d" else
                           run_area(area, work))
    print(f"\n| area | tried | clean | failed |\n|---|---|---|---|")
    for area, rows in table.items():
        tried, clean = sum(r[1] for r in rows), sum(r[2] for r in rows)
        print(f"| ({area}) {AREAS[area]} | {tried:,} | {clean:,} | {tried - clean:,} |")
    for area, rows in table.items():
        for kind, tried, clean, why in rows:
            if tried != clean:
                print(f"- ({area}) {kind}: {'; '.join(why)[:300]}")
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
