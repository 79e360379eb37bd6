"""``wagon compare`` decides: the Zipf slope of page popularity is the pages' (objects left
out), a scenario and the log exported from it are the same on every distribution, and the
table ends with one verdict, the same on the console and in JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from wagon.analysis.compare import _zipf_slope, overall, verdict_line
from wagon.analysis.digest import digest
from wagon.analysis.workload import load_workload
from wagon.cli import main
from wagon.synth import Generator, SynthOptions, synthesize

from .test_synth import hand_model


def _scenario(path: Path, sessions: int, **model) -> Path:
    """A scenario of ``hand_model(**model)`` over a Zipf(1.0) site of 400 pages, each with
    Poisson(2) objects."""
    with open(path, "w") as f:
        synthesize(Generator(hand_model(**model), SynthOptions(sessions=sessions, seed=1,
                                                               pages=400, zipf=1.0)), f)
    return path


def test_the_zipf_slope_is_the_popularity_of_pages(tmp_path):
    """Pages drawn by Zipf(1.0) popularity (4,000 sessions, ~16,000 clicks): −1.0 lies within
    the row's interval (slope ± z₁₋α · its bootstrap error); the slope over all URLs, objects
    fetched with their page mixed in (what the row measured before, −0.89), is far from it."""
    d = digest(load_workload(str(_scenario(tmp_path / "s.jsonl", 4000))))
    slope, se = _zipf_slope(d.page_hits)
    half = stats.norm.ppf(0.95) * se
    assert abs(slope + 1.0) <= half, (slope, se)
    assert abs(_zipf_slope(d.hits)[0] + 1.0) > 5 * half


def _run(*args: str):
    r = CliRunner().invoke(main, ["compare", *args])
    assert r.exit_code == 0, r.output
    return r


def test_a_scenario_and_its_own_log_are_the_same_and_say_it_once(tmp_path):
    """A scenario (1,000 sessions, think times that never reach the 600 s session gap) against
    the CLF log ``wagon export`` writes of it, whose sessions are rebuilt from its whole-second
    lines: every distribution ``same`` (the log's inter-arrival gaps were compared spread
    within their second against the scenario's floored ones: D 0.57), the pages' Zipf slope
    ``close``. The line under the table and the JSON verdict follow the rows by the rule: a
    row that differs decides, else an undecided one, else ``same``; exit status 0."""
    scenario = _scenario(tmp_path / "s.jsonl", 1000, think=(2.0, 0.8))
    r = CliRunner().invoke(main, ["export", str(scenario), "--to", "clf", "-o",
                                  str(tmp_path / "s.log")])
    assert r.exit_code == 0, r.output
    text = _run(str(scenario), str(tmp_path / "s.log")).stdout.splitlines()
    out = json.loads(_run(str(scenario), str(tmp_path / "s.log"), "--json").stdout)
    rows = {row["row"]: row for row in out["rows"]}
    assert [r["verdict"] for r in out["rows"] if r["test"] == "ks_2samp"] == ["same"] * 3
    assert rows["Zipf slope of page popularity"]["verdict"] == "close"
    by = {v: [r["row"] for r in out["rows"] if r["verdict"] == v] for v in
          ("differs", "undecided", "n/a")}
    decision = "differs" if by["differs"] else "undecided" if by["undecided"] else "same"
    assert out["verdict"] == {"decision": decision, "rows": by.get(decision, []),
                              "undecided": len(by["undecided"]), "n_a": len(by["n/a"])}
    head = "verdict: same" if decision == "same" else f"{decision}: {', '.join(by[decision])}"
    assert text[-1].startswith(head) and f"{len(by['n/a'])} n/a" in text[-1]
    assert len(text) == len(out["rows"]) + 2                # header, rows, the verdict


def test_a_robot_is_left_out_of_a_log_as_a_model_leaves_it_out(tmp_path):
    """A log and the same log with a crawler's 301 requests added (/robots.txt, then 300 URLs
    nobody else asked for, at the times of the log's first lines): every row's values are the
    same on both sides (a model has no robot: its requests would move the URL, size and
    per-second rows), and the crawler's requests are said to be left out, on the console and
    in --json."""
    scenario = _scenario(tmp_path / "s.jsonl", 300)
    log = tmp_path / "s.log"
    r = CliRunner().invoke(main, ["export", str(scenario), "--to", "clf", "-o", str(log)])
    assert r.exit_code == 0, r.output
    lines = log.read_text().splitlines(True)
    times = [line.split("[", 1)[1].split("]", 1)[0] for line in lines[:301]]
    crawl = [f'crawler.example - - [{t}] "GET {u} HTTP/1.1" 200 {1000 + i}\n' for i, (t, u) in
             enumerate(zip(times, ["/robots.txt"] + [f"/crawl/{i}.html" for i in range(300)]))]
    both = tmp_path / "both.log"
    both.write_text("".join(lines + crawl))
    out = json.loads(_run(str(log), str(both), "--json").stdout)
    assert [(r["row"], r["a"]) for r in out["rows"]] == [(r["row"], r["b"]) for r in out["rows"]]
    assert out["read"]["a"]["robot_requests"] == 0 and out["read"]["b"]["robot_requests"] == 301
    assert "B: robots' requests left out 301" in _run(str(log), str(both)).stderr


@pytest.mark.parametrize("verdicts,line", [
    (["same", "close", "n/a"], "verdict: same (1 n/a)"),
    (["same", "undecided", "differs", "n/a"], "differs: r2 (1 undecided, 1 n/a)"),
    (["close", "undecided", "undecided"], "undecided: r1, r2"),
    (["n/a", "n/a"], "undecided: no row could be compared (2 n/a)")])
def test_the_overall_verdict(verdicts, line):
    rows = [{"row": f"r{i}", "verdict": v} for i, v in enumerate(verdicts)]
    assert verdict_line(overall(rows)) == line
