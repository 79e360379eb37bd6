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
from click.testing import CliRunner

from wagon import read_results
from wagon.cli import main

from wagon.formats.model import ModelError, load_model, validate
from wagon.formats.scenario import ScenarioError, read_scenario
from wagon.formats.site import SiteSpec, build_site, status_url
from wagon.replay import ReplayOptions, replay

from .conftest import NASA, require_tool
from .servers import apache, nginx
from .test_site import _serving

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
    data = json.loads(nasa_model[0].read_text())
    pages = len(data["site"]["pages"])
    good = {"from": 0, "to": None, "moves": 5, "statuses": {"303": 1.0}}
    data["site"]["move_statuses"] = [good, good | {"to": 1, "statuses": {}}]
    validate(data)
    for bad in ({"to": pages}, {"from": -1}, {"moves": 0}, {"statuses": {"200": 1.0}},
                {"statuses": {"404": 0.7, "302": 0.7}}, {"extra": 1}, {"to": True}):
        data["site"]["move_statuses"] = [good | bad]
        with pytest.raises(ModelError, match="site.move_statuses") as e:
            validate(data)
        assert "\n" not in str(e.value)


def _header(site: dict, seed: int = 0) -> dict:
    """A scenario's header: ``site``, one LAN class of one persistent connection."""
    return {"format": "wagon-scenario", "version": 5, "seed": seed, "model": {}, "options": {},
            "classes": [{"name": "lan/http11", "weight": 1.0,
                         "network": {"name": "lan", "rtt_ms": 0, "down_kbps": 1e6,
                                     "up_kbps": 1e6},
                         "protocol": {"name": "http11", "connections": 1,
                                      "persistent": True}}], "site": site}


def _scenario(path, status: list) -> SiteSpec:
    """A hand-written scenario: a page of two objects, one session of two clicks, its
    requests marked ``status``."""
    site = {"pages": [{"url": "/a.html", "size": 900, "objects": [0, 1]}],
            "objects": [{"url": f"/o{i}.gif", "size": 300 + i} for i in range(2)]}
    header = _header(site)
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


def test_a_forms_logged_redirect_is_followed_where_the_model_says(tmp_path):
    """A form the log answered 302, replayed against a built site (whose 302 names the form
    itself): nginx's own log has each form's POST answered 302 and right after it, on the same
    connection, the GET of a target the model's redirect names, asked for with its logged
    status (never the form again), following or not: the requests ``wagon export`` writes
    (clf, httperf and Tsung alike), the same targets; both targets drawn."""
    require_tool("nginx")
    site = {"pages": [{"url": "/b.html", "size": 700, "objects": []},
                      {"url": "/login", "method": "POST", "size": 0, "objects": [],
                       "redirect": {
                          "delay": 0.2, "to": [{"url": "/b.html", "share": 0.5, "status": 200,
                                                "size": 700},
                                               {"url": "/c.html", "share": 0.5, "status": 404,
                                                "size": 0}]}}],
            "objects": []}
    header = _header(site, seed=3)
    forms = 8
    (tmp_path / "s.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(
        {"id": 0, "start": 0.0, "class": 0, "clicks": [[1, 0.01]] * forms,
         "status": [[k, 0, 302] for k in range(forms)]}) + "\n")
    build_site(SiteSpec.from_dict(site), tmp_path / "site")
    exported = CliRunner().invoke(main, ["export", str(tmp_path / "s.jsonl"), "--to", "clf",
                                         "-o", str(tmp_path / "s.log")])
    assert exported.exit_code == 0, exported.output
    written = (tmp_path / "s.log").read_text().splitlines()
    asked = len(written)                                            # as the export writes them
    for follow in (False, True):
        with nginx(tmp_path / "site", tmp_path / f"ng{follow}") as server:
            s = replay(str(tmp_path / "s.jsonl"), ReplayOptions(
                target=server.url, follow_redirects=follow))
            lines = server.wagon_log.read_text().splitlines()
        got = [re.search(r'"(\S+) (\S+) HTTP/1\.1" (\d+)', x).groups() for x in lines]
        assert len(got) == 2 * forms == asked == s["requests"]["ok"], (follow, got)
        assert all(g == ("POST", "/login?wagon_status=302", "302") for g in got[::2]), got
        after = collections.Counter(got[1::2])
        assert set(after) == {("GET", "/b.html", "200"),
                              ("GET", "/c.html?wagon_status=404", "404")}, after
        # the same targets, in the same order, as every export writes them
        assert [g[1].split("?")[0] for g in got[1::2]] == \
            [re.search(r'"GET (\S+) ', x).group(1) for x in written[1::2]]
    for tool in ("httperf", "tsung"):
        out = CliRunner().invoke(main, ["export", str(tmp_path / "s.jsonl"), "--to", tool,
                                        "-o", str(tmp_path / tool)])
        assert out.exit_code == 0, out.output
        urls = re.findall(r"^\s*(/\S+)|url=\"([^\"]+)\"", (tmp_path / tool).read_text(), re.M)
        urls = [a or b for a, b in urls]
        assert [u.split("?")[0] for u in urls[1::2]] == \
            [re.search(r'"GET (\S+) ', x).group(1) for x in written[1::2]], (tool, urls)
        assert urls[::2] == ["/login?wagon_status=302"] * forms, (tool, urls)


def test_a_forms_post_is_answered_with_its_page_by_every_server_of_a_built_site(tmp_path):
    """A page the log shows sent to with a POST (EPA's search forms) is answered 200 with the
    built file's bytes by nginx (405 before: the objects of 2.5 % of EPA's clicks never asked
    for), Apache and ``wagon serve``; its marked 405 stays 405; nginx answers a PUT as well."""
    site = _scenario(tmp_path / "s.jsonl", [])
    build_site(site, tmp_path / "site")
    (tmp_path / "site").chmod(0o755)
    page = (tmp_path / "site" / "a.html").read_bytes()

    def post(base: str, url: str, method: str = "POST") -> tuple[int, bytes]:
        r = urllib.request.Request(base + url, data=b"q=water", method=method)
        try:
            with urllib.request.urlopen(r, timeout=10) as got:
                return got.status, got.read()
        except urllib.error.HTTPError as e:
            return e.code, b""
    for serve in (nginx, apache):
        with serve(tmp_path / "site", tmp_path / serve.__name__) as server:
            base = server.url.rstrip("/")
            assert post(base, "/a.html") == (200, page), serve.__name__
            assert post(base, status_url("/a.html", 405))[0] == 405, serve.__name__
            if serve is nginx:
                assert post(base, "/a.html", "PUT") == (200, page)
    with _serving(tmp_path / "s.jsonl") as port:
        assert post(f"http://127.0.0.1:{port}", "/a.html") == (200, page)


def test_a_forms_answer_is_kept_per_move_and_drawn_on_the_move_the_session_makes(tmp_path):
    """The shop's log (tests/data), read here with a regex: of its logins (POST /login, with
    or without ?next), those its client's next request (its /static/ files and beacons
    aside) is a login again were all answered 200 (a wrong password, tried again: 47), the
    others all 303. The model keeps that per move (``site.move_statuses``, moves seen at least
    5 times), and synthesis marks a login followed by a login as content and every other login
    on a kept move 303, where drawn by the page's shares alone 4 % of the logins anywhere
    would be content."""
    from .test_shop_loop import DATA as SHOP
    line = re.compile(r'^(\S+) .*?"(\w+) (\S+) HTTP/[0-9.]+" (\d{3})')
    last: dict[str, tuple[str, str, int]] = {}
    seen = collections.Counter()
    for m in map(line.match, gzip.decompress(SHOP.read_bytes()).decode().splitlines()):
        path = m[3].split("?")[0] if m else ""
        if not m or path.startswith("/static/") or path == "/track":
            continue
        prev = last.get(m[1])
        if prev is not None and prev[:2] == ("POST", "/login"):
            seen[(m[2], path) == ("POST", "/login"), prev[2]] += 1
        last[m[1]] = (m[2], path, int(m[4]))
    assert set(seen) == {(True, 200), (False, 303)}
    out = tmp_path / "shop.json"
    r = CliRunner().invoke(main, ["fit", str(SHOP), "-o", str(out), "--workers", "1"])
    assert r.exit_code == 0, r.output
    model = load_model(str(out))
    pages = model.site["pages"]
    name = [f"{p.get('method', 'GET')} {p['url']}" for p in pages]
    logins = {i for i, k in enumerate(name) if k.startswith("POST /login")}
    again = {(a, b): s for (a, b), s in model.move_statuses.items() if a in logins}
    assert sum(row["moves"] for row in model.site["move_statuses"]
               if row["from"] == row["to"] and row["from"] in logins) == seen[True, 200]
    assert all(s == ({} if a == b else {303: 1.0}) for (a, b), s in again.items())
    r = CliRunner().invoke(main, ["synth", str(out), "--sessions", "3000", "--seed", "5", "-o",
                                  str(tmp_path / "s.jsonl")])
    assert r.exit_code == 0, r.output
    drawn, kept = collections.Counter(), model.move_statuses
    for s in read_scenario(str(tmp_path / "s.jsonl")).sessions():
        p = [page for page, _ in s.clicks]
        for k in range(len(p)):
            move = (p[k], p[k + 1] if k + 1 < len(p) else None)
            if p[k] in logins:          # a move the model kept is drawn by its shares (0 or 1)
                drawn[move in kept, move[0] == move[1], s.marks(k).get(0)] += 1
    assert {k for k in drawn if k[0]} == {(True, True, None), (True, False, 303)}, drawn
    # the moves the model did not keep (seen fewer than 5 times, jumps of the chain): the
    # page's shares, 96 % 303
    other = sum(drawn[k] for k in drawn if not k[0])
    assert drawn[True, True, None] > 10 and other < 0.1 * sum(drawn.values()), drawn
    assert drawn[False, False, 303] >= 0.9 * other, drawn
    lines = (tmp_path / "s.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    assert header["statuses_drawn"] is True
    (tmp_path / "bad.jsonl").write_text(json.dumps(header | {"statuses_drawn": "yes"}) + "\n"
                                        + "".join(lines[1:3]))
    with pytest.raises(ScenarioError, match="statuses_drawn must be true or false"):
        read_scenario(str(tmp_path / "bad.jsonl"))
