"""Session reconstruction: clicks, embedded objects, WAGON's thresholds, robots, identities."""
from __future__ import annotations

import math

import numpy as np
import pytest

from wagon import SessionRules, parse_bytes, parse_logs, sessionize
from wagon.fitting import fit



def _log(rows, agent=False) -> bytes:
    """Combined/common lines from (second offset, host, url[, size[, agent]])."""
    out = []
    for row in rows:
        t, host, url = row[:3]
        size = row[3] if len(row) > 3 else 100
        hh, rest = divmod(int(t), 3600)
        mm, ss = divmod(rest, 60)
        line = f'{host} - - [01/Aug/1995:{hh:02d}:{mm:02d}:{ss:02d} +0000] "GET {url} HTTP/1.0" 200 {size}'
        if agent:
            line += f' "-" "{row[4] if len(row) > 4 else "Mozilla/4.0"}"'
        out.append(line)
    return ("\n".join(out) + "\n").encode()


def _sessions(rows, agent=False, **rules):
    req, _ = parse_bytes(_log(rows, agent), "combined" if agent else "common")
    return sessionize(req, SessionRules(**rules))


def test_clicks_embedded_objects_and_think_times():
    s = _sessions([
        (0, "a", "/index.html", 1000), (0, "a", "/logo.gif", 50), (1, "a", "/bar.gif", 70),
        (40, "a", "/next.html", 2000),            # think 39 s after the last object
        (41, "a", "/frame.html", 300),            # < tmin: same click although it is a page
        (47, "a", "/late.gif", 10),               # object 6 s later: embedded
        (100, "a", "/slow.gif", 20),              # object 53 s later: still the page's (no window)
        (130, "a", "/last.html", 5),              # think from the last request of the page: 30 s
    ])
    assert s.counts["sessions"] == 1 and s.counts["clicks"] == 3
    assert s.samples["clicks"].tolist() == [3]
    assert s.samples["think"].tolist() == [39.0, 30.0]
    assert s.samples["objects_per_page"].tolist() == [2, 3, 0]
    assert s.samples["page_size"].tolist() == [1120.0, 2330.0, 5.0]
    assert sorted(s.samples["object_size"].tolist()) == [10, 20, 50, 70, 300]
    window = _sessions([(0, "a", "/index.html"), (100, "a", "/slow.gif")], embed_window=10)
    assert window.counts["clicks"] == 2 and window.counts["object_clicks"] == 1


def test_tmax_ends_a_session_and_timeout_caps_its_length():
    rows = [(0, "a", "/1.html"), (100, "a", "/2.html"), (800, "a", "/3.html"),  # 700 s idle
            (850, "a", "/4.html"), (900, "a", "/5.html")]
    s = _sessions(rows)
    assert s.samples["clicks"].tolist() == [2, 3]
    assert s.samples["think"].tolist() == [100.0, 50.0, 50.0]
    capped = _sessions(rows, timeout=60)
    assert capped.samples["clicks"].tolist() == [1, 1, 2, 1]
    assert _sessions(rows, tmax=1000).samples["clicks"].tolist() == [5]


def test_tmin_merges_pages_into_one_click():
    s = _sessions([(0, "a", "/1.html"), (1, "a", "/2.html"), (3, "a", "/3.html")], tmin=2)
    assert s.counts["clicks"] == 2
    assert _sessions([(0, "a", "/1.html"), (1, "a", "/2.html")], tmin=0.5).counts["clicks"] == 2


def test_robots_left_out_and_counted():
    s = _sessions([(0, "a", "/index.html"), (5, "bot", "/robots.txt"), (9, "bot", "/index.html"),
                   (10, "c", "/index.html", 100, "Googlebot/2.1 (+http://www.google.com/bot)")],
                  agent=True)
    assert s.counts["robot_clients"] == 2 and s.counts["robot_requests"] == 3
    assert s.counts["sessions"] == 1
    kept = _sessions([(0, "a", "/index.html"), (5, "bot", "/robots.txt")], keep_robots=True)
    assert kept.counts["sessions"] == 2


def test_identity_host_plus_agent_splits_shared_proxies():
    rows = [(0, "proxy", "/a.html", 10, "Mozilla/4.0"), (5, "proxy", "/b.html", 10, "Opera/6.0"),
            (9, "proxy", "/c.html", 10, "Mozilla/4.0")]
    assert _sessions(rows, agent=True).counts["sessions"] == 1
    both = _sessions(rows, agent=True, identity="host+agent")
    assert both.counts["sessions"] == 2 and sorted(both.samples["clicks"].tolist()) == [1, 2]


def test_site_entries_transitions_and_objects():
    s = _sessions([(0, "a", "/", 500), (0, "a", "/i.gif", 5), (30, "a", "/x.html", 700),
                   (0, "b", "/", 500), (1, "b", "/i.gif", 5), (60, "b", "/y.html", 800)])
    site = s.site
    url = {u: i for i, u in enumerate(site.urls)}
    assert site.entry == {url["/"]: 2}
    moves = {(site.urls[a], site.urls[b]): c for a, b, c in site.transitions.tolist()}
    assert moves == {("/", "/x.html"): 1, ("/", "/y.html"): 1}
    assert site.page_objects[url["/"]] == [url["/i.gif"]]
    assert site.page_size[url["/"]] == 500 and site.object_size[url["/i.gif"]] == 5


def test_bad_rules_rejected():
    with pytest.raises(ValueError, match="tmin <= tmax"):
        SessionRules(tmin=10, tmax=5)
    with pytest.raises(ValueError, match="identity"):
        SessionRules(identity="cookie")


def test_sample_log_recovers_its_generating_laws(sample):
    """The bundled log is drawn from Poisson(0.25/s) arrivals and lognormal(3, 1.1) think times."""
    req, stats = parse_logs([str(sample)])
    s = sessionize(req, SessionRules(tmax=1e6))
    gaps = fit(s.samples["interarrival"], name="interarrival")
    assert gaps.best.name == "exponential"
    assert 1 / gaps.best.params["scale"] == pytest.approx(0.25, rel=0.1)
    think = fit(s.samples["think"], name="think")
    assert think.best.name == "lognormal"
    # whole-second timestamps and the Tmin cut shift the estimates a little
    assert think.best.params["mu"] == pytest.approx(3.0, abs=0.1)
    assert think.best.params["sigma"] == pytest.approx(1.1, abs=0.1)
    assert s.samples["clicks"].mean() == pytest.approx(5.0, rel=0.15)
    assert s.counts["robot_clients"] == 1


def test_real_traces_sessionize(nasa, epa):
    for path, month in ((nasa, None), (epa, "1995-08")):
        req, _ = parse_logs([str(path)], base_month=month)
        s = sessionize(req)
        c = s.counts
        assert c["requests_used"] + c["robot_requests"] == c["requests"] == len(req)
        assert c["clicks"] + c["embedded_requests"] == c["requests_used"]
        assert int(s.samples["clicks"].sum()) == c["clicks"]
        assert len(s.samples["think"]) == c["clicks"] - c["sessions"]
        assert np.all(s.samples["think"] >= 2.0) and np.all(s.samples["think"] <= 600.0)
        assert np.all(s.samples["interarrival"] >= 0)
        # think times of minutes, a few clicks per session: the usual shape of 1995 web use
        assert 10 < np.median(s.samples["think"]) < 120
        assert 1 <= np.median(s.samples["clicks"]) <= 5
        assert math.isfinite(s.samples["page_size"].mean())


def test_samples_do_not_depend_on_the_order_clients_appear_in(nasa):
    """Regroup NASA's lines by client, in reverse host order (each client's own lines keep their
    order): clients now appear in another order, yet the sessions, the spread of same-second
    starts included, are the same."""
    import gzip
    lines = gzip.decompress(nasa.read_bytes()).splitlines(keepends=True)
    hosts = [line.split(b" ", 1)[0] for line in lines]
    regrouped = [lines[i] for i in sorted(range(len(lines)), key=lambda i: hosts[i],
                                          reverse=True)]
    a = sessionize(parse_bytes(b"".join(lines))[0], seed=3)
    b = sessionize(parse_bytes(b"".join(regrouped))[0], seed=3)
    assert a.resolution == b.resolution == 1.0
    for name in a.samples:
        assert np.array_equal(np.sort(a.samples[name]), np.sort(b.samples[name])), name
    assert np.array_equal(a.session_start, b.session_start)
