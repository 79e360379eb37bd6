"""HTML reports render in a real browser: headless Chromium loads each report, takes a
screenshot, every embedded plot decodes and no script error is raised. A replay's report opens
with its verdict, the figures of ``wagon replay``'s own summary and the per-class and per-page
tables, and its tables agree with nginx's access log
and with percentiles recomputed from the results CSV."""
from __future__ import annotations

import collections
import gzip
import html
import json
import re
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from wagon import load_model, read_results
from wagon.cli import main
from wagon.formats.results import read_run, write_run
from wagon.formats.site import build_site
from wagon.report.replay import _NICE, MAX_POINTS, plot_width
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import resolve_site

from .conftest import require_tool
from .servers import _Fault, fault_server, nginx, write_scenario_file
from .test_synth import hand_model

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=10000", "--window-size=1200,3000"]
LATENCY_ROWS = ("request (successful)", "request (every outcome)", "connect", "first byte",
                "transfer", "page (errors included)", "request, from intended start",
                "session start lag", "event-loop lag")


def rendered(page, tmp) -> tuple[int, str | None, str]:
    """(images that decoded, script errors, the DOM) as the page reports them after loading;
    a screenshot of the page is taken by the same load (and must be a PNG)."""
    chromium = require_tool("chromium")
    shot = tmp / f"{page.stem}.png"
    out = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp / 'chrome'}",
                          f"--screenshot={shot}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    body = re.search(r"<body[^>]*>", out).group(0)
    images = re.search(r'data-images="(ok|broken) (\d+)"', body)
    errors = re.search(r'data-errors="([^"]*)"', body)
    assert images is not None and images.group(1) == "ok", body
    return int(images.group(2)), errors.group(1) if errors else None, out


def table_rows(dom: str, ident: str) -> list[list[str]]:
    """The cells of the table with this id, row by row (header row left out)."""
    t = re.search(rf"<table id=.{ident}.>(.*?)</table>", dom, re.S).group(1)
    return [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", t, re.S)[1:]]


SENT = "requests sent (ok, failed, in flight at the stop)"


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    """Two replays against nginx (40 and 12 sessions, two client classes): (results paths,
    wagon replay's printed summaries, nginx's access log of the first)."""
    tmp = tmp_path_factory.mktemp("report")
    model = hand_model(think=(-2.5, 0.3), rate=30.0, clicks_p=0.5)
    build_site(resolve_site(model, pages=40).spec, tmp / "site")
    paths, texts, access = [], [], None
    for k, sessions in enumerate((40, 12)):
        scenario = tmp / f"s{k}.jsonl"
        with open(scenario, "w") as f:
            synthesize(Generator(model, SynthOptions(sessions=sessions, seed=3 + k, pages=40,
                                                     classes="lan/http11,t1-dsl/http10x2")), f)
        with nginx(tmp / "site", tmp / f"ng{k}") as server:
            results = tmp / f"r{k}.csv"
            r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                          "--results", str(results)])
            assert r.exit_code == 0, r.output
            total = int(re.match(r"requests sent ([\d,]+)", r.stdout).group(1).replace(",", ""))
            log = server.access(expect=total)
            access = access or log
        paths.append(results)
        texts.append(r.stdout)
    return paths, texts, access


@pytest.fixture(scope="module")
def replay_page(replays, tmp_path_factory):
    """The report of the first replay, rendered: (images, errors, DOM)."""
    tmp = tmp_path_factory.mktemp("replay-report")
    out = tmp / "replay.html"
    r = CliRunner().invoke(main, ["report", str(replays[0][0]), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return rendered(out, tmp)


def test_replay_report_renders_with_a_line_under_each_plot(replay_page):
    images, errors, dom = replay_page
    assert errors is None and images >= 5
    # it opens with the verdict, the summary, the per-class and per-page tables, then plots
    heads = [dom.index(f"id=\"{t}\"") for t in ("verdict", "summary", "classes", "pages")]
    assert heads == sorted(heads) and heads[-1] < dom.index("<img"), heads
    assert dom.count("How to read:") >= images                     # one line per plot at least
    assert "the estimators need at least 256" in dom               # a 10 s run: no Hurst plots


def test_summary_table_has_the_figures_of_wagon_replay(replays, replay_page):
    text, dom = replays[1][0], replay_page[2]
    rows = dict(table_rows(dom, "summary"))
    for name in LATENCY_ROWS:
        printed = re.search(rf"^  {re.escape(name)}\s+(.*)$", text, re.M).group(1).split()
        key = next(k for k in rows if k.endswith(f" {name}: p50, p90, p99, max"))
        assert rows[key].split(", ") == printed, name
    first = text.splitlines()[0]
    sent, ok, failed = re.match(r"requests sent ([\d,]+) \(ok ([\d,]+), failed ([\d,]+)",
                                first).groups()
    assert rows[SENT] == f"{sent} ({ok}, {failed}, 0)"
    assert rows["throughput (ok/s)"] == re.search(r"([\d.,]+) ok/s", first).group(1)
    assert rows["connections"] == re.search(r"connections ([\d,]+)", first).group(1)
    assert rows["client classes"] == "lan/http11, t1-dsl/http10x2"
    assert rows["model"].startswith("sha256:")                    # unnamed hand-made model


def test_replay_report_against_nginx_and_numpy(replays, replay_page):
    """Request counts against nginx's access log; percentiles recomputed from the CSV."""
    (path, _), _, access = replays[0], replays[1], replays[2]
    dom = replay_page[2]
    rows = dict(table_rows(dom, "summary"))
    assert rows[SENT].startswith(f"{len(access):,} ")
    served = collections.Counter(a.uri for a in access)
    pages = table_rows(dom, "pages")
    assert pages and all(int(visits) == served[url] for url, visits, *_ in pages)
    req = read_results(path)
    assert sum(int(r[2]) for r in pages) <= len(access)
    ok = req[req["error"] == ""]
    lat = 1e3 * (ok["last_byte"] - ok["start"]).to_numpy()
    p50, p90, p99, _ = (float(v) for v in
                        rows["latency (ms) request (successful): p50, p90, p99, max"].split(", "))
    # the summary's nearest rank (its histogram's bins are 0.1 % wide, printed to 0.01 ms);
    # NumPy's default interpolates, which at a gap between two of ~300 values is 2 % off
    want = np.percentile(lat, [50, 90], method="inverted_cdf")
    assert np.all(np.abs([p50, p90] - want) <= 0.001 * want + 0.01), ([p50, p90], want)
    assert np.sort(lat)[-3] * 0.98 <= p99 <= lat.max() * 1.02     # p99 of ~300 values
    for cls, _, _, _, _, _, c50, _ in table_rows(dom, "classes"):
        v = 1e3 * (ok.loc[ok["class"] == cls, "last_byte"] - ok.loc[ok["class"] == cls, "start"])
        want = np.percentile(v, 50, method="inverted_cdf")        # the summary's nearest rank
        assert float(c50) == pytest.approx(want, rel=1e-3)


def test_comparison_puts_both_replays_in_one_table(replays, tmp_path):
    (a, b), texts, _ = replays
    out = tmp_path / "compare.html"
    r = CliRunner().invoke(main, ["report", "--compare", str(a), str(b), "-o", str(out)])
    assert r.exit_code == 0, r.output
    images, errors, dom = rendered(out, tmp_path)
    assert errors is None and images >= 3
    rows = {row[0]: row[1:] for row in table_rows(dom, "summaries")}
    got = [v.split(" ")[0] for v in rows[SENT]]
    want = [re.match(r"requests sent ([\d,]+)", t).group(1) for t in texts]
    assert got == want and got[0] != got[1]
    assert table_rows(dom, "compare")


def test_errors_by_kind_and_status_as_replay_prints_them(tmp_path):
    """A replay against the fault server (500s, resets, truncated bodies): the report's error
    rows are the replay's own, and its request count is what the server read."""
    pages = [(u, 100, []) for u in ("/ok", "/500", "/reset", "/truncate")]
    sessions = [(0.01 * i, 0, [(i % 4, 0.0), (0, 0.05)]) for i in range(20)]
    scenario = write_scenario_file(tmp_path / "f.jsonl", pages, [], ["lan/http11"], sessions)
    with fault_server() as port:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target",
                                      f"http://127.0.0.1:{port}/", "--results",
                                      str(tmp_path / "f.csv")])
        served = len(_Fault.served)
    printed = re.search(r"^errors (.*)$", r.stdout, re.M).group(1)
    out = tmp_path / "faults.html"
    assert CliRunner().invoke(main, ["report", str(tmp_path / "f.csv"), "-o",
                                     str(out)]).exit_code == 0
    images, errors, dom = rendered(out, tmp_path)
    assert errors is None and images >= 5
    rows = dict(table_rows(dom, "summary"))
    got = ", ".join(f"{k[len('errors: '):]} {v}" for k, v in rows.items()
                    if k.startswith("errors: "))
    assert got == printed and "reset" in got, (got, printed)
    assert int(rows[SENT].split()[0]) == served
    failed = sum(int(r[3]) for r in table_rows(dom, "pages"))
    assert failed == int(rows["errors"])


def test_results_without_model_are_read(replays, tmp_path):
    """A version 2 run file (no model) still reads, and the report says it was not recorded."""
    path = tmp_path / "old.csv"
    path.write_bytes(replays[0][0].read_bytes())
    for suffix in (".pages.csv",):
        (tmp_path / f"old{suffix}").write_bytes(replays[0][0].with_name("r0" + suffix)
                                                .read_bytes())
    run = read_run(replays[0][0])
    run.pop("model")
    write_run(path, {k: v for k, v in run.items() if k not in ("format", "version")})
    doc = re.sub(r'"version": ?3', '"version": 2', (tmp_path / "old.run.json").read_text())
    (tmp_path / "old.run.json").write_text(doc)
    assert read_run(path)["model"] is None
    r = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "old.html")])
    assert r.exit_code == 0 and "not recorded" in (tmp_path / "old.html").read_text()
    (tmp_path / "old.pages.csv").unlink()
    r = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "no.html")])
    assert r.exit_code == 2 and "old.pages.csv" in r.output and "Traceback" not in r.output


@given(st.floats(0, 10 * 86400))
def test_time_series_never_exceed_max_points(duration):
    """Long runs are aggregated: at most MAX_POINTS bins, with the finest round width."""
    w = plot_width(duration)
    assert duration / w <= MAX_POINTS
    finer = [n for n in _NICE if n < w]
    assert not finer or duration / finer[-1] > MAX_POINTS


@pytest.fixture(scope="module")
def reports(tmp_path_factory, sample_model, nasa_fit_report) -> dict:
    """``wagon report`` of the sample's model, once for the module, and of the NASA log
    (``--fit``: its laws too, once for the run): {kind: HTML path}."""
    out = {"model": tmp_path_factory.mktemp("reports") / "model.html", "log": nasa_fit_report}
    r = CliRunner().invoke(main, ["report", str(sample_model[0]), "-o", str(out["model"])])
    assert r.exit_code == 0, r.output
    return out


def test_other_reports_render_with_their_plots(tmp_path, sample, replays, reports):
    compare = tmp_path / "compare.html"
    r = CliRunner().invoke(main, ["report", "--compare", str(sample), str(replays[0][0]), "-o",
                                  str(compare)])
    assert r.exit_code == 0, r.output
    pages = {"model": (reports["model"], 7),               # 6 laws + keep-alive curve
             "log": (reports["log"], 3),                   # load + 2 fitted laws
             "compare": (compare, 3)}
    for name, (out, want) in pages.items():
        images, errors, dom = rendered(out, tmp_path)
        assert images >= want and errors is None, (name, images, errors)
        assert dom.count("How to read:") >= images - (name == "model"), name


def _table(text: str, ident: str) -> list[list[str]]:
    """The rows of the report's table ``ident``, as text."""
    body = re.search(rf"<table id='{ident}'>(.*?)</table>", text, re.S).group(1)
    return [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body)[1:]]


def test_a_log_report_with_fit_opens_with_its_traffic_then_the_laws(reports):
    """``wagon report LOG --fit``: the traffic panel (tests/test_log_report.py checks its
    numbers), then the fit's laws, then Hurst."""
    text = reports["log"].read_text()
    order = [text.index(h) for h in ("<h2>Traffic", "id='totals'", "<h2>Fitted laws",
                                     "<h2>Self-similarity")]
    assert order == sorted(order)


def test_the_model_report_shows_the_intervals_the_model_holds(sample_model, reports):
    """Every chosen law's parameters with the standard errors and intervals of the model file,
    to the digits shown (one number, everywhere it appears; the spliced law has none), and its
    mean as recorded, the model's ``law_mean``."""
    text = reports["model"].read_text()
    doc = json.loads(sample_model[0].read_text())
    for name, var in load_model(sample_model[0]).variables.items():
        assert f"Mean as recorded {doc['variables'][name]['law_mean']:.4g}" in text, name
        if var.law == "spliced":
            assert f"intervals-{name}" not in text
            continue
        shown = {row[0]: row[1:] for row in _table(text, f"intervals-{name}")}
        assert set(shown) == {p for p, m in var.ci_method.items() if m != "fixed"}, name
        for p, (est, se, ci, how) in shown.items():
            assert est == f"{var.params[p]:.4g}" and how == var.ci_method[p]
            assert se == ("" if var.se[p] is None else f"{var.se[p]:.4g}")
            assert ci == ("" if var.ci[p] is None else "[{:.4g}, {:.4g}]".format(*var.ci[p]))


def test_one_count_of_each_thing_in_console_report_and_csv(tmp_path):
    """A run cut by --max-time: sent, ok, failed, in flight and not started are the same
    numbers in the console's headline, the report's summary and class tables and the CSV's
    rows; the verdict comes first."""
    model = hand_model(think=(-1.0, 0.3), rate=20.0, clicks_p=0.3)
    build_site(resolve_site(model, pages=20).spec, tmp_path / "site")
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=60, seed=2, pages=20,
                                                 classes="modem/http11,lan/http10x2")), f)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                      "--results", str(tmp_path / "r.csv"), "--max-time", "1.5",
                                      "--quiet"])
    assert r.exit_code == 0, r.output                          # a planned end, thresholds met
    req = read_results(tmp_path / "r.csv")
    outcome = req["error"]
    counts = {"ok": int((outcome == "").sum()), "in_flight": int((outcome == "in_flight").sum()),
              "not_started": int((outcome == "not_started").sum())}
    counts["failed"] = len(req) - sum(counts.values())
    counts["sent"] = len(req) - counts["not_started"]
    assert counts["not_started"] > 0 and counts["in_flight"] + counts["ok"] > 0
    head = re.match(r"requests sent ([\d,]+) \(ok ([\d,]+), failed ([\d,]+), in flight at the "
                    r"stop ([\d,]+); not started ([\d,]+) of ([\d,]+) due", r.output)
    num = [int(g.replace(",", "")) for g in head.groups()]
    assert num == [counts["sent"], counts["ok"], counts["failed"], counts["in_flight"],
                   counts["not_started"], len(req)]
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(tmp_path / "r.csv"), "-o",
                                     str(out)]).exit_code == 0
    text = out.read_text()
    assert text.index("id='verdict'") < text.index("id='summary'")
    rows = dict(_table(text, "summary"))
    assert rows[SENT] == (f"{counts['sent']:,} ({counts['ok']:,}, {counts['failed']:,}, "
                          f"{counts['in_flight']:,})")
    assert rows["requests not started (of those due)"] == (f"{counts['not_started']:,} "
                                                           f"({len(req):,})")
    ended = counts["ok"] + counts["failed"]
    assert _table(text, "thresholds") == [["errors>1%", f"{100 * counts['failed'] / ended:.2f} %",
                                           "ok"]]                # in its unit, from the rows
    classes = [[v.replace(",", "") for v in c] for c in _table(text, "classes")]
    assert sum(int(c[2]) for c in classes) == len(req)
    assert sum(int(c[3]) for c in classes) == counts["ok"]
    assert sum(int(c[4]) for c in classes) == counts["failed"]
    assert sum(int(c[5]) for c in classes) == counts["in_flight"] + counts["not_started"]


def test_a_scenario_report_shows_its_fitted_laws_as_plots(tmp_path, sample_model):
    """``wagon report SCENARIO`` fits its inter-arrivals and think times and draws each (it
    stopped on a TypeError once plots were written atomically: the page's plots are in memory)."""
    scenario = tmp_path / "s.jsonl"
    r = CliRunner().invoke(main, ["synth", str(sample_model[0]), "--sessions", "200", "--seed",
                                  "1", "-o", str(scenario)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["report", str(scenario), "-o", str(tmp_path / "s.html")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "s.html").read_text()
    fits = text[text.index("<h2>Fitted laws</h2>"):]
    heads = re.findall(r"<h3>(session inter-arrival|think time) \(s\): ", fits)
    assert heads == ["session inter-arrival", "think time"]
    assert fits.count('src="data:image/png;base64,') >= 2


def test_a_one_class_run_has_the_same_percentiles_in_summary_and_class_table(tmp_path):
    """One class, two requests on one connection (the first with its connect, the second
    reused: far apart): the class table's p50 and p99 are the ones ``wagon replay --json``
    printed, within the histogram's 1 % (NumPy's default interpolation put p50 midway)."""
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/ok", 100, [])], [], ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0), (0, 0.05)])])
    with fault_server() as port:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target",
                                      f"http://127.0.0.1:{port}/", "--results",
                                      str(tmp_path / "r.csv"), "--quiet", "--json"])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)["latency"]["request"]
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(tmp_path / "r.csv"), "-o",
                                     str(out)]).exit_code == 0
    [(_, _, _, ok, _, _, p50, p99)] = _table(out.read_text(), "classes")
    assert ok == "2"
    for shown, key in ((p50, "p50"), (p99, "p99")):   # (shown to the ms: half of one more)
        assert abs(float(shown) - printed[key]) <= 0.01 * printed[key] + 5e-4, (shown, key)


def test_the_model_report_shows_the_bootstrap_intervals_fit_printed(sample, tmp_path):
    """``wagon fit --bootstrap`` prints each chosen law's percentile intervals beside the Wald
    ones; the model's report shows the same numbers (it showed the Wald ones only)."""
    model, head = tmp_path / "m.json", tmp_path / "head.log"      # the sample's first 8,000 lines
    head.write_bytes(b"".join(gzip.decompress(sample.read_bytes()).splitlines(True)[:8_000]))
    r = CliRunner().invoke(main, ["fit", str(head), "-o", str(model), "--bootstrap", "2",
                                  "--workers", "1"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.split("parameters of the chosen laws")[1].split("\n\n")[0].splitlines()[2:]
    printed, name = {}, None
    for line in lines:
        cells = line.split()
        name = name if line.startswith(" ") else cells.pop(0)
        printed[name, cells[0]] = f"[{cells[-2]}, {cells[-1]}]"
    out = tmp_path / "m.html"
    assert CliRunner().invoke(main, ["report", str(model), "-o", str(out)]).exit_code == 0
    text = out.read_text()
    shown = {(name, row[0]): row[5] for name in {n for n, _ in printed}
             for row in _table(text, f"intervals-{name}")}
    assert len(printed) >= 2 and shown == printed


def test_a_sped_up_scenario_reports_the_think_times_compare_reads(tmp_path, sample_model):
    """A scenario synthesized with --speedup 10: its report's median think time and
    ``wagon hurst``'s wavelet H at 1 s are the ones ``wagon compare`` prints for it (modeled
    seconds), not a tenth of the think time and H of 10-second bins."""
    scenario = tmp_path / "s.jsonl"
    assert CliRunner().invoke(main, ["synth", str(sample_model[0]), "--sessions", "100",
                                     "--seed", "1", "--speedup", "10", "-o",
                                     str(scenario)]).exit_code == 0
    r = CliRunner().invoke(main, ["compare", str(scenario), str(scenario), "--json"])
    assert r.exit_code == 0, r.output
    compared = next(row["a"] for row in json.loads(r.stdout)["rows"]
                    if row["row"] == "think time (s)")
    assert CliRunner().invoke(main, ["report", str(scenario), "-o",
                                     str(tmp_path / "s.html")]).exit_code == 0
    [(_, _, _, think)] = _table((tmp_path / "s.html").read_text(), "headline")
    assert float(think) == pytest.approx(compared, rel=1e-3)
    hurst = next(row["a"] for row in json.loads(r.stdout)["rows"]
                 if row["row"].startswith("Hurst (wavelet"))
    r = CliRunner().invoke(main, ["hurst", str(scenario), "--scales", "1", "--json"])
    assert r.exit_code == 0, r.output
    assert [e["H"] for e in json.loads(r.stdout)["estimates"]
            if e["estimator"] == "wavelet"] == [pytest.approx(hurst, rel=1e-6)]
