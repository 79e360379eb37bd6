"""The packet relay's links in simulated time (replay.topology, replay.relay), against queueing
theory and the Gilbert–Elliott chain's own formulas, and the topology file's reader: no TUN
device, no clock. The random streams are the test's, the expectations the published formulas."""
from __future__ import annotations

import math
import os
import random

import numpy as np
import pytest

from wagon.formats.topology import TopologyError, read_topology
from wagon.replay.relay import Relay
from wagon.replay.topology import GilbertElliott, Link

SIZE = 1500
BASE = 0xC6120000


def test_gilbert_elliott_loss_rate_and_burst_length_follow_the_chain():
    """Loss rate π_G(1−k) + π_B(1−h) with π_B = p/(p+r) (k = 0.99, h = 0.3), and in the simple
    form (k = 1, h = 0) a mean burst of 1/r losses, within four standard errors."""
    n = 200_000
    p, r, k, h = 0.02, 0.25, 0.99, 0.3
    chain = GilbertElliott(p, r, 1 - k, 1 - h, random.Random(1).random)
    lost = np.array([chain() for _ in range(n)])
    bad = p / (p + r)
    want = (1 - bad) * (1 - k) + bad * (1 - h)
    # losses are correlated: the error of the mean is widened by the chain's burstiness
    se = math.sqrt(want * (1 - want) / n * (1 + 2 * (1 - p - r) / (p + r)))
    assert abs(lost.mean() - want) < 4 * se
    simple = GilbertElliott(p, r, 0.0, 1.0, random.Random(2).random)
    lost = np.array([simple() for _ in range(n)], dtype=np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], lost, [0]))))
    bursts = edges[1::2] - edges[::2]
    assert abs(bursts.mean() - 1 / r) < 4 * math.sqrt(1 - r) / r / math.sqrt(len(bursts))
    assert abs(lost.mean() - bad) < 0.1 * bad


def poisson(rate: float, n: int, seed: int) -> np.ndarray:
    return np.cumsum(np.random.default_rng(seed).exponential(1 / rate, n))


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_a_shared_link_waits_as_md1(rho):
    """Poisson arrivals of fixed-size packets at load ρ: the mean wait in the queue (time out
    minus delay, service and arrival) is Pollaczek–Khinchine's ρ/(2μ(1−ρ)) within 8 %."""
    rate, delay = 1.25e6, 0.02
    mu = rate / SIZE
    link = Link(rate, 1e12, delay, 0.0, random.random)
    arrivals = poisson(rho * mu, 100_000, 3)
    out = np.array([link.enter(SIZE, t) for t in arrivals])
    wait = out - delay - 1 / mu - arrivals
    assert wait.mean() == pytest.approx(rho / (2 * mu * (1 - rho)), rel=0.08)
    assert link.queue_drops == 0 and link.lost == 0


def test_an_overloaded_link_splits_its_rate_as_the_offered_loads():
    """Two groups offering 0.9 and 0.6 of the link's rate (Poisson): the link carries its rate,
    and each group gets its share of the offered load (fluid model), within 3 %."""
    rate = 1.25e6
    mu = rate / SIZE
    link = Link(rate, 64_000, 0.0, 0.0, random.random)
    a, b = poisson(0.9 * mu, 90_000, 4), poisson(0.6 * mu, 60_000, 5)
    times = np.concatenate((a, b))
    group = np.concatenate((np.zeros(len(a), bool), np.ones(len(b), bool)))
    order = np.argsort(times, kind="stable")
    passed = np.array([link.enter(SIZE, t) is not None for t in times[order]])
    span = times.max()
    assert passed.sum() * SIZE / span == pytest.approx(rate, rel=0.03)
    share_b = passed[group[order]].sum() / passed.sum()
    assert share_b == pytest.approx(0.6 / 1.5, rel=0.03)


def test_a_burst_is_dropped_only_past_the_queue_bound():
    """100 packets at the same instant into a queue of 10 packets' bytes (and a few more, clear
    of rounding): 10 go through (one in service, nine waiting), 90 are dropped at the tail, in
    order; at half the rate, none is."""
    link = Link(1e6, 10 * SIZE + 100, 0.0, 0.0, random.random)
    out = [link.enter(SIZE, 1.0) for _ in range(100)]
    assert sum(o is not None for o in out) == 10 and link.queue_drops == 90
    assert [o for o in out if o is not None] == pytest.approx(1.0 + np.arange(1, 11) * SIZE / 1e6)
    calm = Link(1e6, 10 * SIZE, 0.0, 0.0, random.random)
    assert all(calm.enter(SIZE, k * 2 * SIZE / 1e6) is not None for k in range(1000))


def test_red_spreads_its_drops_evenly_at_a_steady_average():
    """RED with its average held (weight ~0, avg set mid-way: p_b = 0.05): the packets from one
    drop to the next are uniform on 1 … 1/p_b = 20 (Floyd & Jacobson 1993, section 7; SciPy's
    chi-square, a false failure once in 1,000 runs), a drop fraction of 2·p_b/(1 + p_b)."""
    from scipy import stats
    red = {"min": 30e3, "max": 90e3, "max_p": 0.1, "weight": 1e-12}
    link = Link(1.25e6, 1e12, 0.0, 0.0, random.Random(7).random, red)
    link.red.avg = 60e3
    n = 100_000
    out = np.array([link.enter(SIZE, k * 0.01) is not None for k in range(n)])
    between = np.diff(np.r_[-1, np.flatnonzero(~out)])
    assert between.min() == 1 and between.max() == 20
    assert stats.chisquare(np.bincount(between)[1:]).pvalue > 0.001
    assert (~out).mean() == pytest.approx(2 * 0.05 / 1.05, rel=0.03)
    assert link.early_drops == link.queue_drops == n - out.sum()


@pytest.mark.parametrize("rho", [0.5, 1.5])
def test_red_keeps_an_overloaded_queue_near_its_max_threshold_not_at_the_bound(rho):
    """Poisson arrivals into a link whose FIFO holds 180 kB, with RED (min 30 kB, max 90 kB):
    at ρ = 0.5 nothing is dropped (the queue of M/D/1 hardly reaches 30 kB); at ρ = 1.5 the
    link still carries its rate and drops the rest (1 − 1/ρ, flow balance, within 2 %), early
    but while its average catches up at the start (the first 1,000 packets: a weight of 0.002
    follows the queue over ~500): the queue no longer reaches the tail, and packets wait about
    max/rate, where a tail-drop FIFO of the same bound keeps them the bound's time."""
    rate = 1.25e6
    arrivals = poisson(rho * rate / SIZE, 60_000, 13)
    waits = {}
    for name, red in (("red", {"min": 30e3, "max": 90e3, "max_p": 0.1, "weight": 0.002}),
                      ("tail", None)):
        link = Link(rate, 180e3, 0.0, 0.0, random.Random(5).random, red)
        out = np.array([link.enter(SIZE, t) or np.nan for t in arrivals[:1000]])
        tail = link.queue_drops - link.early_drops
        out = np.r_[out, [link.enter(SIZE, t) or np.nan for t in arrivals[1000:]]]
        kept = ~np.isnan(out)
        waits[name] = np.mean((out - arrivals)[kept][len(out) // 3:])
        if name == "red":
            assert link.queue_drops - link.early_drops == tail
            if rho < 1:
                assert link.early_drops == 0
            else:
                assert 1 - kept.mean() == pytest.approx(1 - 1 / rho, rel=0.02)
    if rho > 1:
        assert waits["red"] == pytest.approx(90e3 / rate, rel=0.15)
        assert waits["tail"] == pytest.approx(180e3 / rate, rel=0.05)


def packet(client: int, upward: bool) -> bytes:
    ends = (BASE + client).to_bytes(4, "big"), bytes([127, 0, 0, 1])
    return bytes([0x45]) + bytes(11) + b"".join(ends if upward else ends[::-1]) + bytes(20)


def test_a_share_of_a_class_is_behind_the_shared_link_and_counted_there():
    """1,000 clients of one class, a shared link holding 30 % of them (and a second link the
    next 50 %): one packet each way per client; the links count 300 ± 2 and 500 ± 2 clients'
    packets, each client in one group, and the report's totals are the links' sums."""
    side = {"rate": 1e9, "queue": 1e9, "delay": 0.0, "loss": 0.0}
    path = {"delay": 0.0, "up": 1e9, "down": 1e9, "loss": 0.0, "queue_up": 1e9,
            "queue_down": 1e9, "groups": [[0, 0.0, 0.3], [1, 0.3, 0.8]]}
    cfg = {"paths": [path], "links": [{"name": "a", "up": side, "down": side},
                                      {"name": "b", "up": side, "down": side}],
           "base": BASE, "shift": 15, "seed": 1}
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        relay = Relay.from_config(cfg, (null, null))
        for c in range(1, 1001):
            relay.take(packet(c, True), True, 0.0)
            relay.take(packet(c, False), False, 0.0)
        relay.deliver(1.0)
    finally:
        os.close(null)
    links = relay.report()["links"]
    assert abs(links["a"]["up"]["packets"] - 300) <= 2
    assert abs(links["b"]["down"]["packets"] - 500) <= 2
    assert links["a"]["up"]["packets"] == links["a"]["down"]["packets"]
    assert relay.report()["packets"] == 2000 and relay.report()["clients"] == 1000


def test_mean_and_burst_become_the_chain_that_has_them(tmp_path):
    """``{mean, burst}`` is the simple chain of that loss rate (p/(p+r)) and burst (1/r)."""
    f = tmp_path / "t.toml"
    f.write_text('[[link]]\nname = "x"\nup = "2Mbit"\ndown = "8Mbit"\nclasses = ["lan"]\n'
                 'loss = {mean = 0.03, burst = 5}\n')
    link = read_topology(f).links[0]
    chain = link.up.loss
    assert chain.p / (chain.p + chain.r) == pytest.approx(0.03) and 1 / chain.r == 5
    assert (link.up.rate, link.down.rate) == (250_000, 1_000_000)


def test_a_links_red_reaches_the_relays_queue_in_bytes(tmp_path):
    """``red = {min_kb, max_kb}`` (max_p and weight by Floyd & Jacobson's defaults, 0.1 and
    0.002): each direction of the relay's shared link drops early by those thresholds."""
    from wagon.replay.topology import link_from, relay_links
    f = tmp_path / "t.toml"
    f.write_text('[[link]]\nname = "x"\nrate = "8Mbit"\nclasses = ["lan"]\nqueue_kb = 90\n'
                 'red = {min_kb = 15, max_kb = 45}\n')
    links, _ = relay_links(read_topology(f), [("lan", "lan")])
    for side in ("up", "down"):
        red = link_from(links[0][side], random.random).red
        assert (red.min, red.max, red.max_p, red.weight) == (15e3, 45e3, 0.1, 0.002)


@pytest.mark.parametrize("text, says", [
    ('[[link]]\nname = "x"\nrate = "fast"\nclasses = ["lan"]\n', "not a rate"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nup = "1Mbit"\nclasses = ["lan"]\n',
     "give rate, or up and down"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["lan"]\nshare = 0.7\n'
     '[[link]]\nname = "y"\nrate = "1Mbit"\nclasses = ["lan"]\nshare = 0.7\n', "more than 1"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["lan"]\nloss = {mean = 0.9, burst = 1}\n',
     "p = 9 > 1"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["lan"]\nloss = {p = 0.1}\n',
     "Gilbert–Elliott loss is"),
    ('[access.lan]\nloss = 1\n', "lets nothing through"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["lan"]\nred = {min_kb = 50, max_kb = 20}\n',
     "min_kb must be below max_kb"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["lan"]\nred = {min_kb = 5}\n', "RED is"),
    ('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["lan"]\nqueue_kb = 10\n'
     'red = {min_kb = 5, max_kb = 20}\n', "max_kb: 20 is not a number in"),
    ('[links]\n', "unknown key 'links'"),
    ('[server]\ninitcwnd = 0\n', "initcwnd is a whole number of segments"),
    ('[server]\ninitcwnd = 2.5\n', "initcwnd is a whole number of segments"),
    ('[server]\ninitrwnd = 4\n', r"\[server\] has two keys, initcwnd and mss"),
    ('[server]\nmss = 1500\n', "mss is a whole number of bytes, 536 to 1,460 .got 1500"),
    ('[server]\nmss = 535\n', "mss is a whole number of bytes, 536 to 1,460"),
    ('[server]\nmss = 536.0\n', "mss is a whole number of bytes"),
    ('[[link]\n', "not TOML"),
])
def test_a_bad_topology_is_one_line_naming_what(tmp_path, text, says):
    f = tmp_path / "t.toml"
    f.write_text(text)
    with pytest.raises(TopologyError, match=says) as e:
        read_topology(f)
    assert "\n" not in str(e.value) and str(f) in str(e.value)


def test_keys_set_on_a_named_link_replace_the_files(tmp_path):
    """``links`` (an experiment's axis on topology.LINK.KEY) sets that link's keys in both
    directions, as if the file said them, and leaves the other links as the file has them."""
    f = tmp_path / "t.toml"
    f.write_text('[[link]]\nname = "x"\nrate = "8Mbit"\nclasses = ["lan"]\n'
                 '[[link]]\nname = "y"\nrate = "2Mbit"\nclasses = ["wan"]\nqueue_kb = 20\n')
    x, y = read_topology(f, {"x": {"queue_kb": 9.5, "rate": "1Mbit"}}).links
    for side in (x.up, x.down):
        assert (side.queue, side.rate) == (9_500, 125_000)
    assert (y.up.queue, y.up.rate) == (20_000, 250_000)


@pytest.mark.parametrize("links, says", [
    ({"z": {"queue_kb": 8}}, "no link named 'z' to set queue_kb of \\(its links: x\\)"),
    ({"x": {"name": "w"}}, "link 'x': its name is not a setting"),
    ({"x": {"queue_kb": 0.5}}, "queue_kb: 0.5 is not a number in"),
    ({"x": {"rate": 3}}, "not a rate"),
    ({"x": {"colour": "red"}}, "unknown key 'colour'"),
])
def test_a_bad_key_set_on_a_link_is_one_line_naming_what(tmp_path, links, says):
    f = tmp_path / "t.toml"
    f.write_text('[[link]]\nname = "x"\nrate = "8Mbit"\nclasses = ["lan"]\n')
    with pytest.raises(TopologyError, match=says) as e:
        read_topology(f, links)
    assert "\n" not in str(e.value) and str(f) in str(e.value)


def test_a_topology_needs_the_packet_path_and_names_the_scenarios_classes(tmp_path):
    """--topology without --network packet, and a file naming a class the scenario lacks, are
    one line each (ReplayError: exit status 2) before anything is played."""
    from wagon.replay import ReplayError, ReplayOptions
    from wagon.replay.runner import _topology, check_network
    f = tmp_path / "t.toml"
    f.write_text('[[link]]\nname = "x"\nrate = "1Mbit"\nclasses = ["modem"]\n')
    with pytest.raises(ReplayError, match="--topology needs --network packet"):
        check_network(ReplayOptions(target="http://127.0.0.1:1/", topology=str(f)))
    with pytest.raises(ReplayError, match="'modem' is none of the scenario's classes"):
        _topology(str(f), [("t1-dsl/http11", "t1-dsl")], None)
    assert _topology(str(f), [("modem/http10x4", "modem")], None).links[0].name == "x"
