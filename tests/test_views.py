"""What a click fetches besides its page, as the log showed it: views (a browser's cache and its
revalidations) and the delays of embedded requests, judged by the log's own lines, by nginx's
log of a replay, and by the arithmetic of a hand-written scenario."""
from __future__ import annotations

import collections
import json
import re
from datetime import datetime

import numpy as np
import pywt
from scipy import stats
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from wagon.cli import main
from wagon.formats.site import SiteSpec, build_site, page_html
from wagon.logs.delays import pair_spearman
from wagon.replay import ReplayOptions, replay

from .conftest import ELASTIC, NASA, require_tool
from .loop import scenario_header, synth_export, wagon_ok
from .servers import apache, nginx

_STATUS = re.compile(rb'" (\d{3}) ')
_CLF = re.compile(r'^(\S+) - - \[([^]]+)\] "GET (\S+) HTTP/1\.0" (\d{3}) (\d+)$')
_COMBINED = re.compile(r'^\S+ - - \[[^]]+\] "GET (\S+) HTTP/1\.0" \d{3} \d+ "([^"]*)" "([^"]*)"$')


def _statuses(lines: list[bytes]) -> collections.Counter:
    return collections.Counter(int(m.group(1)) for m in map(_STATUS.search, lines) if m)


_SECOND = re.compile(rb"\[(\d\d)/\w{3}/\d{4}:(\d\d):(\d\d):(\d\d) ")
_LINE = re.compile(rb'^(\S+) \S+ \S+ \[([^] ]+) [^]]*\] "[A-Z]+ (\S+)')
_WHEN = "%d/%b/%Y:%H:%M:%S"


def _energies(lines: list[bytes], octaves: int) -> np.ndarray:
    """log₂ of the mean squared Daubechies-3 detail of requests per second at octaves
    1..``octaves`` (2 s, 4 s, ...): Swing's burstiness across time scales."""
    t = np.array([[int(x) for x in m.groups()] for m in map(_SECOND.search, lines) if m])
    t = t @ np.array([86400, 3600, 60, 1])
    a, out = np.bincount(t - t.min()).astype(float), []
    for _ in range(octaves):
        d = pywt.downcoef("d", a, "db3", mode="periodization")
        a = pywt.downcoef("a", a, "db3", mode="periodization")
        out.append(np.log2(np.mean(d * d)))
    return np.array(out)


def test_the_nasa_models_export_has_the_logs_requests_and_revalidations(tmp_path, nasa_model):
    """fit → synth over the log's span → export: as many requests as the log (its lines,
    counted here; NASA's morning has no robot), as many answered 304, 302 and 404 (the
    model's ``statuses``), and the log's burstiness from 2 s to 512 s (wavelet energy within
    1 log₂ unit at each octave, Swing's criterion); a click's first two embedded requests as
    late together as the log's (Spearman's correlation of their delays after the page: 0.80 in
    the log, 0.60 when drawn independently). Each click fetching every object its page was ever
    seen with, in its page's second, gave
    1.31× the log's requests and 2.6 log₂ units too much energy at 2 s."""
    import gzip
    logged = gzip.decompress(NASA.read_bytes()).splitlines()
    run = CliRunner().invoke
    model, scenario, out = nasa_model[0], tmp_path / "s.jsonl", tmp_path / "syn.log"
    span = 39568            # 01/Aug/1995:00:00:01 to 10:59:29 (tests/data/README.md)
    r = run(main, ["synth", str(model), "--duration", str(span), "--profile", "model",
                   "--seed", "1", "-o", str(scenario)])
    assert r.exit_code == 0, r.output
    assert run(main, ["export", str(scenario), "--to", "clf", "-o", str(out)]).exit_code == 0
    made = out.read_bytes().splitlines()
    assert abs(len(made) / len(logged) - 1) < 0.05, (len(made), len(logged))
    share = [_statuses(x)[304] / len(x) for x in (logged, made)]
    assert abs(share[0] - share[1]) < 0.015, share
    for code in (302, 404):               # 1.2 % and 0.9 % of the log's lines
        share = [_statuses(x)[code] / len(x) for x in (logged, made)]
        assert abs(share[0] - share[1]) < 0.004, (code, share)
    gap = _energies(made, 9) - _energies(logged, 9)
    assert np.all(np.abs(gap) < 1.0), gap
    pages = {p["url"] for p in json.loads(model.read_text())["site"]["pages"]}
    together = [stats.spearmanr(*zip(*_first_two_delays(x, pages))).statistic
                for x in (logged, made)]
    assert abs(together[0] - together[1]) < 0.07, together


def _first_two_delays(lines: list[bytes], pages: set[str]) -> list[tuple[float, float]]:
    """(delay of a click's 1st embedded request after its page, of its 2nd) for each click of
    two or more, a click being a page request and the host's requests up to its next page."""
    clicks: dict[str, list[float]] = {}
    out = []
    for m in map(_LINE.match, lines):
        if m is None:
            continue
        host, when, url = m.group(1), datetime.strptime(m.group(2).decode(), _WHEN), m.group(3)
        if url.decode() in pages:
            c = clicks.get(host)
            if c is not None and len(c) >= 3:
                out.append((c[1] - c[0], c[2] - c[0]))
            clicks[host] = [when.timestamp()]
        elif host in clicks:
            clicks[host].append(when.timestamp())
    out += [(c[1] - c[0], c[2] - c[0]) for c in clicks.values() if len(c) >= 3]
    return out


def _scenario(path, views: list[dict], clicks: list[list], delays=None) -> dict:
    """A hand-written scenario (version 4): one page of three objects with ``views``, one
    session of ``clicks``; returns its header."""
    header = scenario_header(4, {
        "pages": [{"url": "/a.html", "size": 900, "objects": [0, 1, 2], "views": views}],
        "objects": [{"url": f"/o{i}.gif", "size": 300 + i} for i in range(3)]})
    if delays is not None:
        header["object_delays"] = {"quantiles": delays}
    path.write_text(json.dumps(header) + "\n" + json.dumps(
        {"id": 0, "start": 0.0, "class": 0, "clicks": clicks}) + "\n")
    return header


def test_a_replay_fetches_each_clicks_view_and_nginx_answers_its_revalidations(tmp_path):
    """nginx's own log: each click asks for its view's objects (one twice when the view has it
    twice), and a revalidated request, asked If-Modified-Since the built file's time, is
    answered 304 with no body (nginx's default ``if_modified_since exact``)."""
    require_tool("nginx")
    views = [{"objects": [0, 2]}, {"objects": [1, 1], "revalidated": [1]},
             {"objects": [], "page_revalidated": True}]
    header = _scenario(tmp_path / "s.jsonl", views,
                       [[0, 0.0, 1], [0, 0.2, 2], [0, 0.2, 3], [0, 0.2, 0]])
    build_site(SiteSpec.from_dict(header["site"]), tmp_path / "site")
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(tmp_path / "s.jsonl"),
                   ReplayOptions(target=server.url, results=str(tmp_path / "r.csv")))
        log = server.access(expect=11)
    want = collections.Counter({("/a.html", 200): 3, ("/a.html", 304): 1, ("/o0.gif", 200): 2,
                                ("/o1.gif", 200): 2, ("/o1.gif", 304): 1, ("/o2.gif", 200): 2})
    assert collections.Counter((a.uri, a.status) for a in log) == want
    assert all(a.bytes == 0 for a in log if a.status == 304)
    assert s["requests"]["total"] == sum(want.values()) == 11


def test_an_export_places_embedded_requests_by_the_delays_and_thinks_from_the_last(tmp_path):
    """The header says the 1st embedded request of a click comes 3 s after its page and the
    2nd 5 s after: so they are logged, and the next click comes its think time (10 s) after
    the last of them, as a log's think times run from a click's completion."""
    delays = [[3.0] * 101, [5.0] * 101]
    _scenario(tmp_path / "s.jsonl", [{"objects": [0, 2]}], [[0, 0.0, 1], [0, 10.0, 1]],
              delays)
    out = tmp_path / "x.log"
    r = CliRunner().invoke(main, ["export", str(tmp_path / "s.jsonl"), "--to", "clf", "-o",
                                  str(out)])
    assert r.exit_code == 0, r.output
    rows = [_CLF.match(line).groups() for line in out.read_text().splitlines()]
    t = [datetime.strptime(when, "%d/%b/%Y:%H:%M:%S %z").timestamp() for _, when, *_ in rows]
    got = [(round(x - t[0]), url) for x, (_, _, url, _, _) in zip(t, rows)]
    assert got == [(0, "/a.html"), (3, "/o0.gif"), (5, "/o2.gif"),
                   (15, "/a.html"), (18, "/o0.gif"), (20, "/o2.gif")]


def test_a_replay_asks_for_a_clicks_objects_when_the_log_placed_them(tmp_path):
    """nginx's own log ($msec): with the scenario's delays (0.4 s and 0.8 s after the page),
    a replay's objects come no earlier than them (``--objects paced``, the default), and at
    once after the page with ``--objects eager`` (they came with the page before)."""
    require_tool("nginx")
    header = _scenario(tmp_path / "s.jsonl", [{"objects": [0, 2]}], [[0, 0.0, 1]],
                       [[0.4] * 101, [0.8] * 101])
    build_site(SiteSpec.from_dict(header["site"]), tmp_path / "site")
    after = {}
    for objects in ("paced", "eager"):
        with nginx(tmp_path / "site", tmp_path / objects, log_format="$msec $request_uri"
                   ) as server:
            s = replay(str(tmp_path / "s.jsonl"), ReplayOptions(target=server.url,
                                                                objects=objects))
            logged = dict(line.split()[::-1] for line in server.log_lines(expect=3))
        assert s["requests"]["ok"] == 3 and len(logged) == 3, logged
        after[objects] = [float(logged[u]) - float(logged["/a.html"])
                          for u in ("/o0.gif", "/o2.gif")]
    assert after["paced"][0] >= 0.35 and after["paced"][1] >= 0.75, after
    assert max(after["eager"]) < 0.35, after


def test_a_request_joined_by_tmin_alone_stays_in_its_click_through_the_loop(tmp_path):
    """A log whose clicks fetch ``/p.html``, an image 5 s after it and a folder page ``/a/``
    1 s after the image (no object: in the click only because it came within Tmin, 2 s, of
    the request before it). The view lists ``/a/`` first (URL order), where the 5-s delay of
    the first embedded request would put it alone, a click of its own; marked ``follows``,
    it is exported with the request before it, so the export, read by a regex here, has every
    ``/a/`` within Tmin of its host's previous request, and fitting the export finds the
    scenario's clicks (read from its lines), not one more per click."""
    t0 = datetime(1995, 8, 1).timestamp()
    lines = []
    for h in range(40):
        t = t0 + 101 * h
        for dt, url in ((0, "/p.html"), (5, "/z.gif"), (6, "/a/"), (26 + h % 9 * 5, "/q.html")):
            when = datetime.utcfromtimestamp(t + dt).strftime("%d/%b/%Y:%H:%M:%S +0000")
            lines.append(f'h{h} - - [{when}] "GET {url} HTTP/1.0" 200 {1000 + len(url)}')
    (tmp_path / "in.log").write_text("\n".join(lines) + "\n")
    run = CliRunner().invoke

    def fit(log: str, model: str) -> dict:
        r = run(main, ["fit", str(tmp_path / log), "-o", str(tmp_path / model)])
        assert r.exit_code == 0, r.output
        return json.loads((tmp_path / model).read_text())
    model = fit("in.log", "m.json")
    assert {o["url"]: o.get("follows", False) for o in model["site"]["objects"]} == {
        "/a/": True, "/z.gif": False}
    last: dict[str, float] = {}
    gaps = []
    for line in synth_export(tmp_path, 60, 4).read_text().splitlines():
        host, when, url, _, _ = _CLF.match(line).groups()
        t = datetime.strptime(when, "%d/%b/%Y:%H:%M:%S %z").timestamp()
        if url == "/a/":
            gaps.append(t - last[host])
        last[host] = t
    assert gaps and max(gaps) < 2, gaps
    clicks = sum(len(json.loads(x)["clicks"]) for x in
                 (tmp_path / "s.jsonl").read_text().splitlines()[1:])
    assert fit("x.log", "m2.json")["provenance"]["clicks"] == clicks


def test_a_click_on_a_page_from_a_cache_is_a_view_without_it_through_the_loop(tmp_path):
    """A combined log: 30 clients fetch /p.html with its style sheet and image; 30 others
    fetch the style sheet and the image alone, their Referer naming /p.html (the page came
    from a cache). The model has /p.html clicked 60 times, half of them in a view with the
    page absent, and takes neither object for a page. Synthesized and exported, the page is
    asked for exactly in the clicks whose view has it (counted from the scenario's lines
    here), and the objects in every click; exported as a combined log, every object names
    the page as its Referer, each line has an agent, and fitting it finds as many views from
    a cache as the scenario has clicks without their page."""
    t0 = datetime(2015, 5, 17).timestamp()
    lines = []
    for h in range(60):
        ref = '"-"' if h < 30 else '"http://example.com/p.html"'
        asked = ([(0, "/p.html", '"-"')] if h < 30 else []) + [
            (1, "/o.css", '"http://example.com/p.html"'), (1, "/i.png", ref if h >= 30 else
                                                           '"http://example.com/p.html"')]
        for dt, url, referer in asked:
            when = datetime.utcfromtimestamp(t0 + 700 * h + dt).strftime(
                "%d/%b/%Y:%H:%M:%S +0000")
            lines.append(f'10.0.0.{h} - - [{when}] "GET {url} HTTP/1.1" 200 {1000 + len(url)} '
                         f'{referer} "Mozilla/5.0 (X11; Linux x86_64; rv:38.0) Firefox/38.0"')
    (tmp_path / "in.log").write_text("\n".join(lines) + "\n")
    run = CliRunner().invoke
    r = run(main, ["fit", str(tmp_path / "in.log"), "-o", str(tmp_path / "m.json")])
    assert r.exit_code == 0, r.output
    assert "clicks on objects 30 (views of a page from a cache 30, linked from other sites 0)" \
        in r.output
    site = json.loads((tmp_path / "m.json").read_text())["site"]
    assert [(p["url"], p["hits"]) for p in site["pages"]] == [("/p.html", 60)]
    absent = [v for v in site["pages"][0]["views"] if v.get("page_absent")]
    assert [(v["first"], len(v["objects"])) for v in absent] == [(30, 2)]
    exported = synth_export(tmp_path, 80, 2)
    rows = (tmp_path / "s.jsonl").read_text().splitlines()
    views = json.loads(rows[0])["site"]["pages"][0]["views"]
    clicks = [c for x in rows[1:] for c in json.loads(x)["clicks"]]
    without = sum(views[c[2] - 1].get("page_absent", False) for c in clicks if c[2])
    assert 0 < without < len(clicks)
    urls = collections.Counter(_CLF.match(x).group(3) for x in exported.read_text().splitlines())
    assert urls == {"/p.html": len(clicks) - without, "/o.css": len(clicks),
                    "/i.png": len(clicks)}
    wagon_ok("export", str(tmp_path / "s.jsonl"), "--to", "combined", "--target",
             "http://example.com/", "-o", str(tmp_path / "c.log"))
    combined = [_COMBINED.match(x).groups() for x in
                (tmp_path / "c.log").read_text().splitlines()]
    assert all(ref == "http://example.com/p.html" and agent != "-"
               for url, ref, agent in combined if url != "/p.html")
    r = wagon_ok("fit", str(tmp_path / "c.log"), "-o", str(tmp_path / "m2.json"))
    assert f"(views of a page from a cache {without}, linked from other sites 0)" in r.output


def test_a_replay_asks_for_a_cached_pages_objects_alone_naming_it(tmp_path):
    """A click whose view has its page absent: nginx's own log shows its objects, each with
    the page's URL as its Referer, and no request for the page; the replay counts two."""
    require_tool("nginx")
    header = _scenario(tmp_path / "s.jsonl", [{"objects": [0, 2], "page_absent": True}],
                       [[0, 0.0, 1]])
    build_site(SiteSpec.from_dict(header["site"]), tmp_path / "site")
    with nginx(tmp_path / "site", tmp_path / "ng", log_format="$request_uri $http_referer"
               ) as server:
        s = replay(str(tmp_path / "s.jsonl"), ReplayOptions(target=server.url))
        logged = server.log_lines(expect=2)
    page = server.url.rstrip("/") + "/a.html"
    assert sorted(logged) == [f"/o0.gif {page}", f"/o2.gif {page}"]
    assert s["requests"]["total"] == 2


def test_a_page_fetched_within_a_click_is_served_by_its_page(tmp_path):
    """A view may hold a page's URL (a page asked for within Tmin of the click: an embedded
    request of it); site build writes the page there, counts the object as served by it, and
    skips nothing; the file is the page's HTML, not an object's filler."""
    site = SiteSpec.from_dict({"pages": [{"url": "/", "size": 900, "objects": [0, 1]},
                                         {"url": "/b.html", "size": 800, "objects": []}],
                               "objects": [{"url": "/b.html", "size": 5000},
                                           {"url": "/o.gif", "size": 300}]})
    report = build_site(site, tmp_path / "site")
    assert (report.pages, report.objects, report.as_pages, report.skipped) == (2, 1, 1, {})
    assert (tmp_path / "site" / "b.html").read_bytes() == page_html(site, 1)


def test_a_folder_page_and_each_query_of_a_template_are_answered_by_nginx_and_apache(tmp_path):
    """/ksc.html beside /ksc.html/x.gif (NASA's most clicked page is one): site build writes
    the page as the folder's index.html, and nginx and Apache, configured as wagon's servers
    are, answer its URL 200 with the page (their default: a 301 to /ksc.html/). A query
    template's concrete URLs (netnea's ``/MailHandler?attachmentId=…``) are each answered with
    their own size (the percentile CRC-32 · 101 / 2³² picks, computed here with zlib; before,
    one file at the path answered them all), a query not built with the path's file."""
    import urllib.request
    import zlib
    sizes = list(range(2000, 2000 + 101 * 300, 300))
    site = SiteSpec.from_dict({"pages": [{"url": "/ksc.html", "size": 900, "objects": [0]},
                                         {"url": "/q?id={id}", "size": 700, "objects": [],
                                          "sizes": sizes}],
                               "objects": [{"url": "/ksc.html/x.gif", "size": 300}]})
    queries = ["/q?id=5", "/q?id=6", "/q?id=a%40b/c"]
    report = build_site(site, tmp_path / "site", {u: 1 for u in queries})
    assert (report.pages, report.objects, report.folders, report.skipped) == (
        5, 1, 1, {"a page of an application (a URL template)": 1})   # /q?id={id} itself
    (tmp_path / "site").chmod(0o755)
    for serve in (nginx, apache):
        with serve(tmp_path / "site", tmp_path / serve.__name__) as server:
            base = server.url.rstrip("/")
            with urllib.request.urlopen(base + "/ksc.html") as r:
                assert (r.status, r.url.endswith("/ksc.html"), r.read()) == (
                    200, True, page_html(site, 0))
            for url in queries + ["/q?id=7"]:
                with urllib.request.urlopen(base + url) as r:
                    expected = sizes[zlib.crc32((url if url != "/q?id=7" else queries[0]
                                                 ).encode()) * 101 >> 32]
                    assert (serve.__name__, url, r.status, len(r.read())) == (
                        serve.__name__, url, 200, expected)


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=3, max_size=60))
def test_the_pooled_spearman_of_one_rank_is_scipys(pairs):
    """One rank's pairs, each counted once: the correlation of mid-ranks SciPy computes (ties
    share their mid-rank, as in ``scipy.stats.spearmanr``)."""
    a, b = np.array(pairs).T
    found = pair_spearman(np.c_[np.ones(len(a)), a, b, np.ones(len(a))].astype(np.int64))
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        assert found is None
    else:
        assert found[0] == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-9)
        assert found[1:] == (len(a), len(a))


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=8, max_size=60),
       st.booleans())
def test_a_delay_dependence_interval_holds_its_spearman(pairs, concordant):
    """The model's ``object_delays.dependence``: its 95 % interval holds the estimate, as the
    model reader demands, at a perfect correlation too (every click's two delays equal:
    Spearman 1, whose Fisher z is infinite: the interval was drawn around 0.999999 and left
    1 out, a model ``wagon synth`` then refused)."""
    from wagon.modeling.delays import delay_dependence
    a, b = np.array(pairs).T
    if concordant:
        b = a
    rows = np.c_[np.ones(len(a)), a, b, np.ones(len(a))].astype(np.int64)
    found = delay_dependence(rows, {"quantiles": [[0.0] * 101], "requests": [len(a)]})
    if found is not None:
        lo, hi = found["interval"]
        assert lo <= found["spearman"] <= hi, found


def test_the_kept_views_ask_for_the_logs_requests_rare_large_ones_included():
    """elastic's blog (tests/data): pages with up to 30 distinct views (4 pages more than
    16), the rare ones large (a presentation's slides). The views the model keeps, 16 a page,
    ask for the log's requests within 1 %."""
    import wagon
    from wagon.modeling.model import kept_views
    req, _ = wagon.parse_logs([str(ELASTIC)])
    s = wagon.sessionize(req)
    asked = sum((v.first + v.repeat) * (len(v.objects) + (not v.page_absent))
                for views in s.site.page_views.values() for v in kept_views(views))
    assert max(len(v) for v in s.site.page_views.values()) > 16
    assert asked == pytest.approx(s.counts["requests_used"], rel=0.01)
