"""``--cluster``: the fit's stages and a replay's segments on Dask workers — a LocalCluster and a
real ``dask scheduler`` with two ``dask worker`` processes on loopback. The fit must give the
model one process gives; the replay must make every request once (counted by nginx) and merge
its statistics as ``--workers`` does, and its live view (``--dashboard``) must be one view of
both segments, ending on the summary's and the results' figures."""
from __future__ import annotations

import collections
import gzip
import json
import subprocess
import sys
import threading
import time

import distributed
import numpy as np
import pytest
from click.testing import CliRunner

from wagon import read_results
from wagon.cli import main
from wagon.cluster import ClusterError, parse_cluster
from wagon.formats.scenario import read_scenario
from wagon.logs.pieces import plan
from wagon.modeling import FitOptions, fit_logs

from .servers import free_port, nginx
from .test_dashboard import scrape, value
from .test_progress import LINE
from .test_replay import expected_urls, rows, site_and_scenario  # noqa: F401 (a fixture)



@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A real scheduler and two single-threaded worker processes on loopback; its address."""
    folder = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{free_port()}"
    cli = [sys.executable, "-m", "dask"]
    procs = [subprocess.Popen(cli + ["scheduler", "--host", "127.0.0.1", "--port",
                                     address.rsplit(":", 1)[1], "--no-dashboard"],
                              cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    procs += [subprocess.Popen(cli + ["worker", address, "--nworkers", "1", "--nthreads", "1",
                                      "--no-dashboard", "--local-directory", str(folder)],
                               cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
              for _ in range(2)]
    try:
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        _stop(procs[1:])         # the workers first: they close at once while the scheduler runs
        _stop(procs[:1])


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(1)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _model(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "created"}


@pytest.mark.parametrize("spec, want", [
    ("local:3", "local:3"), (" tcp://10.0.0.1:8786", "tcp://10.0.0.1:8786"),
    ("local:0", None), ("local", None), ("10.0.0.1:8786", None), ("http://x:1", None)])
def test_cluster_specs(spec, want):
    if want is None:
        with pytest.raises(ClusterError, match="expected local:N"):
            parse_cluster(spec)
    else:
        assert str(parse_cluster(spec)) == want


def test_a_bad_cluster_is_one_line_and_exit_2(nasa):
    r = CliRunner().invoke(main, ["fit", str(nasa), "--cluster", "local:x"])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "expected local:N" in r.output
    r = CliRunner().invoke(main, ["fit", "-", "--cluster", "local:2"], input=b"")
    assert r.exit_code == 2 and "standard input" in r.output


def test_single_machine_use_never_loads_dask():
    code = ("import sys, wagon.cli.fit, wagon.cli.replay, wagon.modeling, wagon.replay.runner, "
            "wagon.cluster; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.untimed                # a model compared, nothing timed
def test_fit_on_a_real_scheduler_gives_the_single_process_model(scheduler, nasa, tmp_path):
    """The model and parse statistics of one process, from stages spread over both workers; the
    bootstrap's chunks, mapped over both, give the serial bootstrap's p-values and intervals
    (a small fit: a bootstrapped NASA fit costs 7 s in each process, for the same map)."""
    log = tmp_path / "nasa.log"                      # plain: cut into byte ranges on workers
    log.write_bytes(gzip.decompress(nasa.read_bytes()))
    from wagon.fitting import fit
    from wagon.fitting.report import apply_bootstrap, bootstrap_tasks
    from wagon.modeling.dask_runner import DaskRunner
    from wagon.modeling.stages import bootstrap_stage
    options = FitOptions(seed=7)
    alone = fit_logs([str(log)], options)
    assert len(plan([str(log)], 300_000)) >= 5
    x = np.random.default_rng(8).weibull(0.8, 400) * 30
    serial = fit(x, candidates=["weibull", "gamma"], bootstrap=60, seed=4)
    again = fit(x, candidates=["weibull", "gamma"])
    tasks = bootstrap_tasks(again, 60, seed=4)
    with distributed.Client(scheduler) as client, distributed.get_task_stream(client) as ts:
        runner = DaskRunner(client, piece_bytes=300_000)
        assert runner.partitions_for(1) == 4
        spread = fit_logs([str(log)], options, runner=runner)
        apply_bootstrap(again, tasks, runner.map(bootstrap_stage, tasks, "bootstrap", None))
    assert _model(spread.model.data) == _model(alone.model.data)
    assert spread.stats.as_dict() == alone.stats.as_dict()
    assert [(c.p_a2, c.p_w2, c.p_method, c.conf_int(bootstrap=True)) for c in again.candidates] \
        == [(c.p_a2, c.p_w2, c.p_method, c.conf_int(bootstrap=True)) for c in serial.candidates]
    assert serial.candidates[0].p_method == "bootstrap(60)"
    by_stage = collections.defaultdict(set)
    for t in ts.data:
        by_stage[t["key"].split("-")[0]].add(t["worker"])
    assert len(by_stage["parse_stage"]) == 2 and len(by_stage["sessionize_stage"]) == 2, by_stage
    assert len(by_stage["variable_stage"]) == 2 and len(by_stage["bootstrap_stage"]) == 2


@pytest.mark.untimed
def test_fit_on_a_local_cluster_from_the_command_line(nasa, nasa_model, tmp_path):
    two = CliRunner().invoke(main, ["fit", str(nasa), "-o", str(tmp_path / "b.json"),
                                    "--cluster", "local:2"])
    assert two.exit_code == 0, two.output
    assert (_model(json.loads(nasa_model[0].read_text()))
            == _model(json.loads((tmp_path / "b.json").read_text())))


@pytest.mark.parametrize("where", ["local", "scheduler"])
def test_replay_segments_on_workers_every_request_once(where, request, tmp_path,
                                                       site_and_scenario):
    cluster = "local:2" if where == "local" else request.getfixturevalue("scheduler")
    scenario = site_and_scenario("lan/http11,lan/http10x2,t1-dsl/http11", sessions=50)
    want = expected_urls(scenario)
    results = tmp_path / "r.csv"
    # on the local cluster, the live view too: /metrics read during the run and at its end
    view = f"http://127.0.0.1:{free_port()}/" if where == "local" else None
    shown = ["--dashboard", view.split("/")[2], "--dashboard-hold", "1.5"] if view else []
    scrapes: list[dict] = []
    watcher = threading.Thread(target=_watch, args=(view, scrapes), daemon=True)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        began = time.monotonic()
        if view:
            watcher.start()
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                      "--results", str(results), "--cluster", cluster,
                                      "--json", "--progress-every", "0.5", *shown])
        assert r.exit_code == 0, r.output
        log = server.access(expect=sum(want.values()))
    s = json.loads(r.stdout)
    got = rows(results)
    assert collections.Counter(a.uri for a in log) == want            # nginx: each once
    assert collections.Counter(g["url"] for g in got) == want
    assert s["requests"]["total"] == len(got) == sum(want.values()) and s["errors"]["total"] == 0
    assert s["sessions"]["completed"] == 50 and s["workers"] == 2 and s["complete"]
    assert results.read_text().count("session,class,page") == 1
    assert len({g["session"] for g in got}) == 50
    pages = rows(tmp_path / "r.pages.csv")
    assert len(pages) == sum(len(x.clicks) for x in read_scenario(scenario).sessions())
    clocks = s["cluster"]["workers"]
    assert len(clocks) == 2 and all(abs(c["clock_offset_ms"]) < 50 for c in clocks)
    frame = read_results(results)
    ok = frame[frame["error"].isna() | (frame["error"] == "")]
    ok = 1e3 * (ok["last_byte"] - ok["start"]).to_numpy()
    merged = [s["latency"]["request"][f"p{q}"] for q in (50, 90, 99)]
    # the histogram keeps 3 significant digits; the CSV's times are rounded to the microsecond,
    # so a difference of two of them is within 1 µs (0.001 ms) of the true latency
    assert np.allclose(merged, np.percentile(ok, [50, 90, 99], method="inverted_cdf"),
                       rtol=2e-3, atol=1e-3)
    assert s["generator"]["start_lag"]["p99"] < 50 and time.monotonic() - began < 60
    # live progress from the segments, summed: the last line holds the summary's counts
    lines = [m.groups() for m in map(LINE.fullmatch, r.stderr.splitlines()) if m]
    assert len(lines) >= 2, r.stderr
    _, started, active, ended, _, requests, errors, _ = lines[-1]
    assert (int(started), int(active), int(ended)) == (50, 0, 50)
    assert int(requests) == s["requests"]["total"] and int(errors) == 0
    if view:
        watcher.join(10)
        _one_view_of_both(scrapes, s, got)


def _watch(base: str, scrapes: list[dict]) -> None:
    """Scrape the live view's /metrics every 0.1 s until it shows the run's final figures."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            scrapes.append(scrape(base))
        except OSError:                      # not listening yet
            pass
        if scrapes and value(scrapes[-1], "wagon_run_finished") == 1:
            return
        time.sleep(0.1)


def _one_view_of_both(scrapes: list[dict], s: dict, got: list[dict]) -> None:
    """The view showed the run while it went, and at its end the summary's and the results'
    figures, from both segments (a CPU series per worker)."""
    total = [value(m, "wagon_requests") for m in scrapes]
    final = scrapes[-1]
    assert value(final, "wagon_run_finished") == 1
    assert any(0 < n < total[-1] for n in total), total          # figures during the run
    assert total[-1] == s["requests"]["total"] == len(got)
    assert collections.Counter({(m.labels["class"], m.labels["kind"], m.labels["outcome"]):
                                m.value for m in final["wagon_requests"]}) == \
        collections.Counter((g["class"], g["kind"], g["error"] or "ok") for g in got)
    assert value(final, "wagon_sessions_started") == s["sessions"]["started"] == 50
    assert len({m.labels["worker"] for m in final["wagon_generator_cpu_seconds"]}) == 2
