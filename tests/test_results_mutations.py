"""Every results file wagon reads is checked: hypothesis mutates one field, one line or the
layout of a real replay's requests, pages and run files (played once against ``wagon serve``)
into something the format forbids, and the one reader must refuse it with a ResultsError of one
line naming the file, the line (CSV) and the field: zero tracebacks, zero invalid files
accepted. The mutations are invalid by construction (docs/formats.md, results files), so the
oracle is the format's rules, not the reader."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.cli import main
from wagon.formats.results import ResultsError, read_results, read_run

from .servers import write_scenario_file
from .test_replay import wagon_serve

TIMES = ["intended", "start", "connect_start", "tls_start", "connected", "first_byte",
         "last_byte"]
#: the last two: beyond the formats' limit of a run (1e7 s; the issue's IndexError in report)
NOT_A_TIME = ["inf", "-inf", "nan", "x", "-5.0", "1e400", "1,5", "0x10",
              "99999999999999999999", "2e7"]
#: column → values it must never hold
FORBIDDEN = {
    "requests": {"session": ["-1", "x", "1.5", "", "99999999999999999999999"],
                 "class": ["", "nosuch"], "page": ["-1", "x", ""], "url": [""],
                 "kind": ["", "pageX", "PAGE", "3"], "conn": ["-2", "c", ""],
                 "reused": ["2", "-1", "true", ""], "retried": ["2", "yes", ""],
                 **{t: NOT_A_TIME for t in TIMES},
                 "status": ["99", "600", "1000", "-1", "x", ""],
                 "bytes": ["-1", str(2**41), "1.5e0", ""],
                 "error": ["boom", "HTTP_4XX", "http_3xx", "ok", "0"],
                 "request": ["-1", "x", "", "0.5"]},
    "pages": {"session": ["-1", "s", ""], "class": ["", "nosuch"], "page": ["-3", "p"],
              "intended": NOT_A_TIME + [""], "start": NOT_A_TIME + [""],
              "html_first_byte": NOT_A_TIME, "done": NOT_A_TIME,
              "response_time": ["inf", "-1.0", "x"], "html_latency": ["inf", "-0.5", "nan"],
              "objects": ["-1", "1.5", "o", ""], "errors": ["-2", "e", ""]}}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A real replay's files (text): successes, 404s of a page and of an object."""
    d = tmp_path_factory.mktemp("played")
    scenario = write_scenario_file(d / "s.jsonl", [("/index.html", 100, [0, 0]),
                                                   ("/nope.html", 50, [])],
                                   [("/gone.gif", 10)], ["lan/http11", "lan/http10"],
                                   [(0.0, 0, [(0, 0.0), (1, 0.1)]), (0.1, 1, [(0, 0.0)]),
                                    (0.2, 0, [(1, 0.0), (0, 0.1)])])
    with wagon_serve(d) as (port, _):
        r = subprocess.run([sys.executable, "-m", "wagon", "replay", str(scenario), "--target",
                            f"http://127.0.0.1:{port}/", "--results", str(d / "r.csv"),
                            "--quiet"], capture_output=True, text=True, timeout=60, cwd=d)
    assert r.returncode in (0, 1, 4), r.stderr           # 4: requests failed (the 404s)
    files = {"requests": d / "r.csv", "pages": d / "r.pages.csv", "run": d / "r.run.json"}
    req = read_results(files["requests"])
    assert set(req["error"]) == {"", "http_4xx"} and len(read_results(files["pages"])) == 5
    # each session's requests numbered 0, 1, ... however often a page lists an object: the
    # scenario's clicks give 4, 3 and 4 requests (/index.html and /gone.gif twice)
    assert {s: sorted(g) for s, g in req.groupby("session")["request"]} == {
        s: list(range(n)) for s, n in ((0, 4), (1, 3), (2, 4))}
    # each connection closed once: an HTTP/1.0 answer completed by the server's close was
    # counted closed twice (-1 connections held)
    held = json.loads(files["run"].read_text())["summary"]["open_connections"]["per_second"]
    assert min(held, default=0) >= 0, held
    return {k: p.read_bytes().decode() for k, p in files.items()}


def _csv_mutant(text: str, name: str, data, ended: bool = True) -> tuple[str, int]:
    """``text`` (a CSV file) with one forbidden thing; the line it is on. ``ended``: the run
    file beside it has its summary (its duration: a time after it is forbidden)."""
    lines = text.split("\r\n")[:-1]
    header = lines[0].split(",")
    k = data.draw(st.integers(1, len(lines) - 1))
    row = lines[k].split(",")
    how = data.draw(st.sampled_from(["value", "value", "value", "drop field", "add field",
                                     "cut", "blank line", "header", "order"]
                                    + ["late"] * ended + ["repeat"]
                                    + ["unbegun"] * (name == "requests")))
    if how == "late":                            # after the run's end (its run file's duration)
        column = data.draw(st.sampled_from([c for c in TIMES if c in header]))
        row[header.index(column)] = "50.000000"
    elif how == "unbegun":                       # connected, never begun (recover's TypeError)
        i, j = header.index("connect_start"), header.index("connected")
        row[i], row[j] = "", row[j] or f"{float(row[header.index('start')] or 0):.6f}"
    elif how == "repeat":                        # a row twice
        lines.insert(k, lines[k])
        return "\r\n".join(lines) + "\r\n", k + 2
    elif how == "value":
        column = data.draw(st.sampled_from(sorted(FORBIDDEN[name])))
        row[header.index(column)] = data.draw(st.sampled_from(FORBIDDEN[name][column]))
    elif how == "drop field":
        del row[data.draw(st.integers(0, len(row) - 1))]
    elif how == "add field":
        row.insert(data.draw(st.integers(0, len(row))), data.draw(st.sampled_from(["", "0"])))
    elif how == "cut":                           # the file ends mid-line (a killed writer)
        cut = data.draw(st.integers(1, len(lines[k]) - 1)) if len(lines[k]) > 1 else 0
        body = "\r\n".join(lines[:k]) + "\r\n" + lines[k][:cut]
        return body if cut else body[:-1], k + 1 if cut else k
    elif how == "blank line":
        lines.insert(k, "")
        return "\r\n".join(lines) + "\r\n", k + 1
    elif how == "header":
        j = data.draw(st.integers(1, len(header) - 1))
        header[j] = data.draw(st.sampled_from([header[j - 1], header[j].upper(), "extra"]))
        lines[0], k, row = ",".join(header), 0, lines[0].split(",")
        return "\r\n".join(lines) + "\r\n", 1
    else:                                        # the last byte before the first / the start
        a, b = ("first_byte", "last_byte") if name == "requests" else ("start", "done")
        i, j = header.index(a), header.index(b)
        if not (row[i] and row[j]) or "in_flight" in row:
            return text, 0
        row[i] = f"{float(row[j]) + 1.5:.6f}"
        if name == "pages":                          # still done − start: only the order is wrong
            row[header.index("response_time")] = f"{-1.5:.6f}"
    lines[k] = ",".join(row)
    return "\r\n".join(lines) + "\r\n", k + 1


@pytest.mark.parametrize("name", ["requests", "pages"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_forbidden_csv_is_one_line_naming_its_line(tmp_path_factory, played, name, data):
    text, line = _csv_mutant(played[name], name, data)
    if not line:
        return
    d = tmp_path_factory.mktemp("mutant")
    path = d / ("r.csv" if name == "requests" else "r.pages.csv")
    path.write_text(text, newline="")
    (d / "r.run.json").write_text(played["run"])
    with pytest.raises(ResultsError) as e:
        read_results(path)
    message = str(e.value)
    assert "\n" not in message and (message.startswith(f"{path}:{line}:") or line == 1 and
                                    message.startswith(f"{path}:")), (message, line)


#: a run file's field → values it must never hold (None: the field removed)
NOT_RUN = {("format",): ["wagon-scenario", None], ("version",): [0, 9, "7", 6.5, None],
           ("scenario",): [None, 3, []], ("target",): [None, {}, 1],
           ("t0",): [None, 0], ("t0_unix",): ["x", None, True],
           ("classes",): ["lan", [1], None, {}], ("options",): [None, [], "x"],
           ("options", "workers"): [0, "2", None], ("options", "fail_on"): ["x", [1]],
           ("options", "warmup"): [-1.0, "5"],
           ("speedup",): [0, -1.0, "1", 2**70, 1e-9],
           ("options", "timeout"): [-1.0, "x"], ("options", "follow_redirects"): ["x", 1],
           ("summary", "generator", "start_lag"): [{}, None, {"p50": -1, "p90": 1, "p99": 1,
                                                              "max": 1}], ("model",): ["x", [], {"name": 3}, {"digest": 1.5}],
           ("summary",): [[], "done", 1],
           ("summary", "requests", "ok"): [-1, "5", 1.5, None, True],
           ("summary", "requests"): [None, []],
           ("summary", "duration_s"): [-0.5, "1", None, 1e20],
           ("summary", "complete"): ["yes", None, 0],
           ("summary", "errors", "by_kind"): [[], {"reset": -1}, {"reset": "2"}],
           ("summary", "latency", "request"): [{"p50": 1.0}, {"p50": -1, "p90": 1, "p99": 1,
                                                               "max": 1}, []],
           ("summary", "throughput", "per_second"): [[1, -1], ["1"], 3],
           ("summary", "sessions", "started"): [-3, 2.5],
           ("summary", "warnings"): ["x", [1]], ("summary", "connections"): [-1, "2"],
           ("summary", "window", "to_s"): [-1.0, "x"]}


def _run_mutant(doc: dict, data) -> dict:
    """A copy of the run file ``doc`` (with its summary) with one forbidden value."""
    where = data.draw(st.sampled_from(sorted(NOT_RUN)))
    value = data.draw(st.sampled_from(NOT_RUN[where]))
    mutant = json.loads(json.dumps(doc))
    parent = mutant
    for key in where[:-1]:
        parent = parent[key]
    if value is None:                            # a field the file must have, removed
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    return mutant


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_forbidden_run_file_is_one_line_naming_its_field(tmp_path_factory, played, data):
    doc = json.loads(played["run"])
    text = data.draw(st.sampled_from(
        [json.dumps(_run_mutant(doc, data))] * 6 + ["[]", "null", "\"x\"",
         played["run"][:len(played["run"]) // 2], played["run"].replace("\"version\": 8", "\"version\": NaN"),
         "\udcff"]))
    d = tmp_path_factory.mktemp("mutant")
    (d / "r.run.json").write_text(text, errors="surrogateescape")
    with pytest.raises(ResultsError) as e:
        read_run(d / "r.csv")
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{d / 'r.run.json'}:")


def test_commands_reading_forbidden_results_exit_2(tmp_path, played):
    """Through the commands (the issue's observer): report, hurst and recover on results
    with a negative session, a status of 700 or a run file without options: exit 2, one line,
    no traceback (recover reads the run file only)."""
    requests = played["requests"].split("\r\n")
    row = requests[2].split(",")
    row[15] = "700"                                    # status
    cases = [("requests", played["requests"].replace("\r\n0,", "\r\n-1,", 1)),
             ("requests", "\r\n".join(requests[:2] + [",".join(row)] + requests[3:])),
             ("run", json.dumps({k: v for k, v in json.loads(played["run"]).items()
                                 if k != "options"}))]
    for name, text in cases:
        for what, path in played.items():
            (tmp_path / {"requests": "r.csv", "pages": "r.pages.csv", "run": "r.run.json"}[
                what]).write_text(text if what == name else path, newline="")
        for args in [["report", "r.csv", "-o", "x.html"], ["hurst", "r.csv"]] + (
                [["recover", "r.csv"]] if name == "run" else []):
            with pytest.MonkeyPatch.context() as m:
                m.chdir(tmp_path)
                r = CliRunner().invoke(main, args)
            assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, (
                args, name, text[:300], r.output)
            assert "Traceback" not in r.output and not (tmp_path / "x.html").exists()


def _killed(d, played: dict[str, str], requests: str, pages: str) -> None:
    """What a replay whose parent was killed leaves (replay/parts.py): the run file pending,
    without summary, and part 0 of 1 of the requests and pages (their rows, no header)."""
    run = json.loads(played["run"])
    run["summary"] = None
    (d / "r.run.json.part").write_text(json.dumps(run))
    for text, part in ((requests, "r.csv.part0"), (pages, "r.pages.csv.part0")):
        (d / part).write_text(text.split("\r\n", 1)[1], newline="")


@pytest.mark.parametrize("name", ["requests", "pages"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_recover_refuses_every_forbidden_part_file(tmp_path_factory, played, name, data):
    """The same mutations in the part files of a killed run (found by bench/mutations_audit.py:
    recover checked only the types, and published a class of "", -1 objects, a time of −5 s):
    exit 2, one line naming the part file and its line, no results file. A last line cut
    short is a death mid-write: recover drops it (tests/test_replay.py)."""
    text, line = _csv_mutant(played[name], name, data, ended=False)
    header = played[name].split("\r\n", 1)[0] + "\r\n"
    if not line or not text.startswith(header) or not text.endswith("\r\n"):
        return                            # the header (parts have none), or a cut last line
    d = tmp_path_factory.mktemp("killed")
    _killed(d, played, *(text if name == w else played[w] for w in ("requests", "pages")))
    r = CliRunner().invoke(main, ["recover", str(d / "r.csv")])
    part = d / ("r.csv.part0" if name == "requests" else "r.pages.csv.part0")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith(f"Error: {part}:{line - 1}: a damaged part file ("), r.output
    assert not (d / "r.csv").exists() and "Traceback" not in r.output


def test_recover_writes_the_results_it_is_given(tmp_path, played):
    """A killed run's files moved elsewhere: recover publishes them where it is told, beside
    their parts (it wrote the --results its run file recorded: another run's results there
    overwritten, and none where the user looks)."""
    recorded = Path(json.loads(played["run"])["options"]["results"])
    before = recorded.read_bytes()
    _killed(tmp_path, played, played["requests"], played["pages"])
    r = CliRunner().invoke(main, ["recover", str(tmp_path / "r.csv")])
    assert r.exit_code == 5 and f"results: {tmp_path / 'r.csv'} (requests)" in r.output, r.output
    rows = played["requests"].count("\r\n") - 1                  # the part file's rows
    assert len(read_results(tmp_path / "r.csv")) == rows and recorded.read_bytes() == before
    assert not list(tmp_path.glob("*.part*"))


@pytest.mark.parametrize("args", [["report", "r.pages.csv", "-o", "x.html"],
                                  ["hurst", "r.pages.csv"], ["compare", "r.csv", "r.pages.csv"]])
def test_a_pages_file_where_requests_are_read_is_one_line(tmp_path, played, args):
    """A replay's pages file given where its requests file is read (it reads as results): a
    KeyError traceback, exit 1; now one line naming the requests file to give."""
    (tmp_path / "r.csv").write_text(played["requests"], newline="")
    (tmp_path / "r.pages.csv").write_text(played["pages"], newline="")
    (tmp_path / "r.run.json").write_text(played["run"])
    with pytest.MonkeyPatch.context() as m:
        m.chdir(tmp_path)
        r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "r.pages.csv: a replay's pages, not its requests (give r.csv)" in r.output, r.output


def test_recover_says_which_part_file_is_missing(tmp_path, played):
    """A killed run of 2 processes with part 1's files gone (a copy that missed them): its
    sessions' requests are counted not started, as for a process that wrote nothing, and the
    summary says so (it said nothing: every request it had sent was silently 'not started')."""
    _killed(tmp_path, played, played["requests"], played["pages"])
    run = json.loads((tmp_path / "r.run.json.part").read_text())
    run["options"]["workers"] = 2
    (tmp_path / "r.run.json.part").write_text(json.dumps(run))
    r = CliRunner().invoke(main, ["recover", str(tmp_path / "r.csv")])
    assert r.exit_code == 5, r.output
    assert (f"worker died: worker 1: no part file {tmp_path / 'r.csv.part1'}: its sessions' "
            "requests are counted not started") in r.output, r.output
    assert read_run(tmp_path / "r.csv")["summary"]["dead_workers"] == [
        f"worker 1: no part file {tmp_path / 'r.csv.part1'}: its sessions' requests are "
        "counted not started"]


def test_recover_says_a_pages_part_file_is_missing(tmp_path, played):
    """A killed run whose r.pages.csv.part0 is gone (its 5 pages, read_results of the run's
    pages file): published with none of them, and said nowhere (exit 5 as for any recovered
    run, the summary's pages 0)."""
    _killed(tmp_path, played, played["requests"], played["pages"])
    (tmp_path / "r.pages.csv.part0").unlink()
    r = CliRunner().invoke(main, ["recover", str(tmp_path / "r.csv")])
    assert r.exit_code == 5, r.output
    said = (f"worker 0: no part file {tmp_path / 'r.pages.csv.part0'}: its sessions' pages are "
            "not in the results")
    assert f"worker died: {said}" in r.output, r.output
    run = read_run(tmp_path / "r.csv")["summary"]
    assert run["dead_workers"] == [said] and run["pages"]["total"] == 0
