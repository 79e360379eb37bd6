"""``wagon experiment``'s repetitions and what each row says happened: n rows a cell and a
summary whose intervals are recomputed here (numpy and scipy, by hand), differences claimed only
between intervals apart, the relay's lag p99 against numpy's percentile of the lags fed to it
and in the lag flag, the kernel's connection states against sockets this test sets up, its
dropped SYNs against iproute2's nstat, the machine's busy CPU against this process's."""
from __future__ import annotations

import csv
import math
import os
import shutil
import socket
import subprocess
import time

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from wagon.cli import main
from wagon.experiment import run as runner
from wagon.experiment.run import LAG_FLAG_MS, generator_columns
from wagon.experiment.status import StatusSampler, listen_drops, machine_cpu, tcp_states
from wagon.experiment.summary import apart, differences
from wagon.replay.relay import LAG_BIN, Relay

RECIPE = "[experiment]\nname = 'r'\nseed = 10\npause = 0\n[axes]\n'workload.rate' = [1, 2]\n"


def _csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _fake_play(recipe, run, sites, out):
    """A run's row without a server: a measure drawn from the run's seed and cell."""
    rng = np.random.default_rng(run.seed)
    return {"experiment": "r", "cell": run.cell.index, "repetition": run.repetition,
            "seed": run.seed, **run.cell.axes, "server": "wagon", "stopped_by": "",
            "page_mean_with_cut_s": float(rng.normal(1 + run.cell.index, 0.1)),
            "requests_ok": int(rng.integers(50, 60))}


@pytest.mark.parametrize("given, n", [([], 3), (["--repetitions", "5"], 5)])
def test_each_cell_gets_n_rows_and_a_t_interval_of_their_mean(tmp_path, monkeypatch, given, n):
    (tmp_path / "r.toml").write_text(RECIPE)
    monkeypatch.setattr(runner, "play", _fake_play)
    r = CliRunner().invoke(main, ["experiment", "r.toml", "--out", "out", *given])
    assert r.exit_code == 0, r.output
    rows = _csv(tmp_path / "out" / "table.csv")
    assert [(int(x["cell"]), int(x["repetition"]), int(x["seed"])) for x in rows] == [
        (c, k, 10 + k) for c in (0, 1) for k in range(n)]         # each its own seed
    for s in _csv(tmp_path / "out" / "summary.csv"):
        for name in ("page_mean_with_cut_s", "requests_ok"):
            x = np.array([float(row[name]) for row in rows if row["cell"] == s["cell"]])
            half = stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / math.sqrt(n)
            assert int(s["repetitions"]) == len(x) == n
            assert float(s[f"{name}_lo"]) == pytest.approx(x.mean() - half, rel=1e-12)
            assert float(s[f"{name}_hi"]) == pytest.approx(x.mean() + half, rel=1e-12)
    # cells 1 s apart with a spread of 0.1 s: a finding; the counts, drawn alike, are not
    assert "cell 0 vs 1: differ in page_mean_with_cut_s (95 % intervals apart)" in r.output


def test_a_difference_is_a_finding_only_between_intervals_apart():
    a = {"cell": 0, "x_lo": 1.0, "x_hi": 2.0}
    assert apart(a, {"cell": 1, "x_lo": 2.1, "x_hi": 3.0}, "x") is True
    assert apart(a, {"cell": 1, "x_lo": 1.9, "x_hi": 3.0}, "x") is False
    assert apart(a, {"cell": 1, "x_lo": math.nan, "x_hi": math.nan}, "x") is None
    assert differences([a, {"cell": 1, "x_lo": 0.5, "x_hi": 1.5}], ["x"]) == [
        "cell 0 vs 1: no difference beyond the runs' spread (every interval overlaps)"]


def test_the_relay_lag_p99_is_numpys_and_flags_the_run():
    """Packets put out by ``deliver`` at known lags: the relay's p99 is numpy's percentile to a
    bin (0.1 ms); a p99 over LAG_FLAG_MS flags the run's generator, with why."""
    lags = np.random.default_rng(1).exponential(0.004, 2000)
    r, w = os.pipe()
    relay = Relay([{"delay": 0.0, "up": 1e6, "down": 1e6, "loss": 0.0, "queue_up": 1e5,
                    "queue_down": 1e5}], [], 0, 0, 0, (w, w))
    os.set_blocking(w, False)
    try:
        for k, lag in enumerate(lags):
            relay.due = [(100.0 - lag, k, w, b"x")]
            relay.deliver(100.0)
            os.read(r, 1)
    finally:
        os.close(r)
        os.close(w)
    report = relay.report()
    want = np.percentile(lags, 99, method="inverted_cdf") * 1000
    assert want <= report["lag_p99_ms"] <= want + LAG_BIN * 1000 + 1e-9
    assert report["lag_max_ms"] == pytest.approx(lags.max() * 1000, abs=1e-3)
    base = {"generator": {"start_lag": {"p99": 1.0}, "loop_lag": {"p99": 1.0}, "cpu": 0.1},
            "warnings": []}
    for p99, flagged in ((LAG_FLAG_MS * 5, True), (LAG_FLAG_MS / 5, False)):
        cols = generator_columns({**base, "network": {"relay": {
            "packets": 990, "lost": 10, "queue_drops": 0, "lag_p99_ms": p99}}})
        assert cols["generator_lagged"] is flagged and cols["path_loss_rate"] == 0.01
        assert ("packet relay's lag p99" in cols["generator_warning"]) is flagged
    lost = generator_columns({**base, "network": {"relay": None}})     # died with its counts
    assert lost["path_loss_rate"] is None and lost["generator_lagged"] is False


def test_the_kernel_connection_states_are_the_sockets_this_test_left():
    """Six connections to a listening socket: 2 left open (ESTABLISHED), 2 closed by the
    server's side alone (FIN-WAIT-2), 1 by the client alone (CLOSE-WAIT), 1 by the server then
    the client (TIME-WAIT)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
        served = [listener.accept()[0] for _ in clients]
        try:
            for k in (2, 3, 5):
                served[k].close()
            clients[4].close()
            time.sleep(0.05)
            clients[5].close()
            want = {"established": 2, "fin_wait2": 2, "close_wait": 1, "time_wait": 1}
            deadline = time.monotonic() + 3
            while (got := tcp_states(port)) != {**dict.fromkeys(got, 0), **want}:
                assert time.monotonic() < deadline, got
                time.sleep(0.02)
            assert tcp_states(port, exclude=[clients[0].getsockname()[1]])["established"] == 1
        finally:
            for s in (*clients, *served):
                s.close()


class _NoStatus:
    def status(self) -> dict[str, float]:
        return {}


def test_the_syns_a_full_listen_queue_drops_are_counted_as_nstat_reads_them():
    """A listener whose accept queue one connection fills: each further connect's SYN is
    dropped (Banga & Druschel's "dropped at the full listen socket"); the sampler's
    ``listen_drops_delta`` counts at least those, and ``listen_drops`` reads what iproute2's
    nstat reads (other drops of the machine only between the readings)."""
    nstat = shutil.which("nstat")
    if nstat is None:
        pytest.skip("iproute2's nstat is not installed")
    n = 20
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        first = socket.create_connection(("127.0.0.1", port))    # the queue is full
        tries = []
        with StatusSampler(_NoStatus(), every=0.05, port=port) as sampler:
            time.sleep(0.12)
            for _ in range(n):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                tries.append(s)
            time.sleep(0.15)
        for s in (*tries, first):
            s.close()
    summary = sampler.summary(None)
    assert summary["listen_drops_delta"] >= n
    assert 0 < summary["machine_cpu_busy"] <= 1
    before = listen_drops()
    shown = subprocess.run([nstat, "-asz", "TcpExtListenDrops"], capture_output=True,
                           text=True, check=True).stdout
    after = listen_drops()
    counted = int(shown.split("TcpExtListenDrops")[1].split()[0])
    assert before <= counted <= after


def test_the_machines_busy_cpu_holds_what_this_process_burnt():
    """Half a second of arithmetic in this process: the machine's busy CPU-seconds grow by at
    least what this process spent (to /proc/stat's tick), its total by the wall time on every
    core."""
    busy0, all0 = machine_cpu()
    cpu0, wall0 = time.process_time(), time.monotonic()
    while time.process_time() - cpu0 < 0.5:
        sum(range(1000))
    busy1, all1 = machine_cpu()
    spent, wall = time.process_time() - cpu0, time.monotonic() - wall0
    tick = 1 / os.sysconf("SC_CLK_TCK")
    assert busy1 - busy0 >= spent - 2 * tick
    assert (all1 - all0) == pytest.approx(wall * os.cpu_count(), rel=0.15, abs=4 * tick)
