"""The logged answers other than 200 and 304 (404, redirects, 403, 5xx): kept per URL by the fit
(judged by the log's own lines), marked on a scenario's requests, and answered by nginx and
Apache serving a built site (judged by nginx's own log and by the answers a plain HTTP client
gets)."""
from __future__ import annotations

import collections
import gzip
import json
import re
import urllib.error
import urllib.request

import pytest

from wagon import read_results

from wagon.formats.model import ModelError, load_model, validate
from wagon.formats.scenario import ScenarioError, read_scenario
from wagon.formats.site import SiteSpec, build_site, status_url
from wagon.replay import ReplayOptions, replay

from .conftest import NASA, require_tool
from .servers import apache, nginx

_LINE = re.compile(rb'"[A-Z]+ (\S+)[^"]*" (\d{3}) ')


def test_the_fit_keeps_the_share_of_each_urls_logged_answers(nasa_model):
    """Every share the model holds is its URL's count of that status over its requests in
    NASA's lines (counted here; the morning has no robot), and every URL of the model's site
    that the log answered 302 or 404 has its shares."""
    per_url: dict[bytes, collections.Counter] = collections.defaultdict(collections.Counter)
    for m in map(_LINE.search, gzip.decompress(NASA.read_bytes()).splitlines()):
        if m:
            path, q, _ = m.group(1).partition(b"?")     # NASA's queries: imagemap clicks x,y
            per_url[path + (b"?{arg}" if q else b"")][int(m.group(2))] += 1
    model = load_model(nasa_model[0])
    statuses = model.statuses
    assert {a for s in statuses.values() for a in s} == {302, 404, 403}
    for url, shares in statuses.items():
        seen = per_url[url.encode()]
        want = {c: n / sum(seen.values()) for c, n in seen.items() if c not in (200, 304)}
        assert shares == pytest.approx(want, abs=1e-6), url
    modeled = {e["url"] for k in ("pages", "objects") for e in model.site[k]}
    answered = {u.decode() for u, c in per_url.items() if c[302] + c[404]}
    assert modeled & answered <= set(statuses) and len(modeled & answered) > 50


def test_a_model_with_bad_statuses_is_refused_in_one_line(nasa_model):
    data = json.loads(nasa_model[0].read_text())
    validate(data)
    for bad in ({"/a": {"200": 0.5}}, {"/a": {"404": 1.5}}, {"/a": {"404": 0.6, "302": 0.6}},
                {"a": {"404": 0.1}}, []):
        data["site"]["statuses"] = bad
        with pytest.raises(ModelError, match="site.statuses"):
            validate(data)


def _scenario(path, status: list) -> SiteSpec:
    """A hand-written scenario: a page of two objects, one session of two clicks, its
    requests marked ``status``."""
    site = {"pages": [{"url": "/a.html", "size": 900, "objects": [0, 1]}],
            "objects": [{"url": f"/o{i}.gif", "size": 300 + i} for i in range(2)]}
    header = {"format": "wagon-scenario", "version": 5, "seed": 0, "model": {}, "options": {},
              "classes": [{"name": "lan/http11", "weight": 1.0,
                           "network": {"name": "lan", "rtt_ms": 0, "down_kbps": 1e6,
                                       "up_kbps": 1e6},
                           "protocol": {"name": "http11", "connections": 1,
                                        "persistent": True}}], "site": site}
    path.write_text(json.dumps(header) + "\n" + json.dumps(
        {"id": 0, "start": 0.0, "class": 0, "clicks": [[0, 0.0], [0, 0.1]],
         "status": status}) + "\n")
    return SiteSpec.from_dict(site)


def test_a_replay_asks_for_each_marked_answer_and_nginx_logs_it(tmp_path):
    """nginx's own log: each marked request answered with its mark's status (a redirect to
    the URL itself), the others 200, as the scenario says; the page answered 404 still
    fetches its objects (the log's client did), and no answer asked for is a failure."""
    require_tool("nginx")
    site = _scenario(tmp_path / "s.jsonl", [[0, 0, 404], [0, 2, 302], [1, 1, 503]])
    build_site(site, tmp_path / "site")
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(tmp_path / "s.jsonl"), ReplayOptions(
            target=server.url, follow_redirects=False, results=str(tmp_path / "r.csv")))
        log = server.access(expect=6)
    assert (s["requests"]["ok"], s["requests"]["failed"]) == (6, 0)   # the answers asked for
    rows = read_results(tmp_path / "r.csv")              # the reader takes what it wrote
    assert sorted(rows["status"]) == sorted(a.status for a in log) and \
        (rows["error"].fillna("") == "").all()
    got = collections.Counter((a.uri.split("?")[0], a.status) for a in log)
    assert got == collections.Counter({("/a.html", 404): 1, ("/o0.gif", 200): 1,
                                       ("/o1.gif", 302): 1, ("/a.html", 200): 1,
                                       ("/o0.gif", 503): 1, ("/o1.gif", 200): 1})


def test_without_status_marks_the_target_answers_as_it_does(tmp_path):
    """``--no-status-marks`` (an application answers its own statuses): nginx's own log has
    no marked URL and every answer its own, 200."""
    require_tool("nginx")
    site = _scenario(tmp_path / "s.jsonl", [[0, 0, 404], [0, 2, 302], [1, 1, 503]])
    build_site(site, tmp_path / "site")
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(tmp_path / "s.jsonl"), ReplayOptions(
            target=server.url, follow_redirects=False, status_marks=False))
        log = server.access(expect=6)
    assert s["requests"]["ok"] == 6 and len(log) == 6
    assert all(a.status == 200 and "wagon_status" not in a.uri for a in log), log


def test_nginx_and_apache_answer_a_marked_url_as_any_client_asks(tmp_path):
    """A plain HTTP client gets the logged answer from the marked URL: the error, or a
    redirect to the URL itself (a page of the site); the unmarked URL is the page."""
    site = _scenario(tmp_path / "s.jsonl", [])
    build_site(site, tmp_path / "site")
    (tmp_path / "site").chmod(0o755)

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None
    opener = urllib.request.build_opener(Stay)
    for serve in (nginx, apache):
        with serve(tmp_path / "site", tmp_path / serve.__name__) as server:
            base = server.url.rstrip("/")
            got = {}
            for url, code in (("/a.html", 404), ("/o1.gif", 301), ("/o0.gif", 403),
                              ("/a.html", 500), ("/a.html?x=1", 302)):
                try:
                    opener.open(base + status_url(url, code))
                except urllib.error.HTTPError as e:
                    got[url, code] = (e.code, e.headers.get("Location", "").endswith(
                        url.split("?")[0]))
            with opener.open(base + "/a.html") as r:
                assert r.status == 200, serve.__name__
        assert got == {("/a.html", 404): (404, False), ("/o1.gif", 301): (301, True),
                       ("/o0.gif", 403): (403, False), ("/a.html", 500): (500, False),
                       ("/a.html?x=1", 302): (302, True)}, serve.__name__


def test_a_scenario_mark_that_names_no_request_is_refused_in_one_line(tmp_path):
    for bad in ([[2, 0, 404]], [[0, 3, 404]], [[0, 0, 200]], [[0, 0]]):
        _scenario(tmp_path / "s.jsonl", bad)
        with pytest.raises(ScenarioError, match="s.jsonl:2: 'status' must list"):
            list(read_scenario(tmp_path / "s.jsonl").sessions())


def test_urls_with_empty_or_dot_segments_are_served_as_logged(tmp_path):
    """EPA's model holds ``/./enviro/…`` and ``/region10/www//…``: site build writes them where
    nginx, which merges such segments, looks for them, and nginx answers each 200 with its
    page (it answered 32 of EPA's 404 when site build skipped them)."""
    from wagon.formats.site import page_html
    site = SiteSpec.from_dict({"pages": [{"url": "/./c.html", "size": 500, "objects": []},
                                         {"url": "/a//b.html", "size": 600, "objects": []}],
                               "objects": []})
    report = build_site(site, tmp_path / "site")
    assert (report.pages, report.skipped) == (2, {})
    (tmp_path / "site").chmod(0o755)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        for i, url in enumerate(site.page_urls):
            with urllib.request.urlopen(server.url.rstrip("/") + url) as r:
                assert (r.status, r.read()) == (200, page_html(site, i)), url
