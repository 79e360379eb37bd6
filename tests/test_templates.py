"""Pages of an application in scenarios (version 6): a page is a request template (method, URL
with placeholders) and each click of it carries its concrete URL. The oracle is the format's
rule written in the test (a regular expression built here, independently of the reader):
what the writer writes the reader reads back, and every URL that breaks the rule is refused
with a one-line error naming the line."""
from __future__ import annotations

import io
import json
import re
from urllib.parse import quote

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.formats.classes import parse_classes
from wagon.formats.scenario import (ScenarioError, ScenarioWriter, SessionBatch,
                                    scenario_from_bytes)
from wagon.formats.site import SiteSpec, build_site, fill_template
from wagon.replay import ReplayOptions, replay

from .servers import nginx

TEMPLATE = "/item/{id}/{kind}?q={q}&page={page}"
#: the rule of docs/formats.md, written here: each placeholder a non-empty value without
#: / ? & #, whitespace or braces
RULE = re.compile(r"/item/[^/?&#\s{}]+/[^/?&#\s{}]+\?q=[^/?&#\s{}]+&page=[^/?&#\s{}]+")


def _header() -> dict:
    return {"seed": 1, "classes": [c.to_dict() for c in parse_classes("lan/http11")],
            "site": {"pages": [{"url": "/", "size": 100, "objects": [0], "links": [1]},
                               {"url": TEMPLATE, "size": 200, "objects": [0], "links": [],
                                "method": "POST"}],
                     "objects": [{"url": "/a.css", "size": 10}]}}


def _scenario(urls: list[str]) -> bytes:
    """One session: the home page, then one click of the template per URL."""
    out = io.StringIO()
    n = len(urls)
    ScenarioWriter(out, _header()).write(SessionBatch(
        np.array([0]), np.array([0.0]), np.array([0]), np.array([0, n + 1]),
        np.array([0] + [1] * n), np.arange(n + 1, dtype=float),
        urls=[(k + 1, u) for k, u in enumerate(urls)]))
    return out.getvalue().encode()


VALUES = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                 max_size=12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.fixed_dictionaries({k: VALUES for k in ("id", "kind", "q", "page")}),
                min_size=1, max_size=5))
def test_filled_templates_are_written_and_read_back_with_the_page_method(values):
    urls = [fill_template(TEMPLATE, v) for v in values]
    want = [f"/item/{quote(v['id'], safe='')}/{quote(v['kind'], safe='')}?q="
            f"{quote(v['q'], safe='')}&page={quote(v['page'], safe='')}" for v in values]
    assert urls == want and all(RULE.fullmatch(u) for u in urls)
    sc = scenario_from_bytes(_scenario(urls))
    (s,) = list(sc.sessions())
    assert [s.url(k, sc.site) for k in range(len(s.clicks))] == ["/"] + urls
    frame = sc.to_frame()
    assert frame["method"].tolist() == ["GET"] + ["POST"] * len(urls)


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_a_url_that_breaks_the_template_is_refused_on_its_line(url):
    data = _scenario(["/item/1/a?q=x&page=2"]).replace(
        b'"/item/1/a?q=x&page=2"', json.dumps(url).encode())
    if RULE.fullmatch(url):
        assert [s.urls for s in scenario_from_bytes(data).sessions()] == [{1: url}]
        return
    with pytest.raises(ScenarioError, match=r"^<scenario>:2: click 1 of the template page 1"):
        list(scenario_from_bytes(data).sessions())


@pytest.mark.parametrize("line, why", [
    ({"urls": [[0, "/"]]}, "click 0 has a URL of its own but its page 0 is not a template"),
    ({}, "needs its URL in 'urls'"),
    ({"urls": [[7, "/item/1/a?q=x&page=2"]]}, "'urls' must list [click, url] pairs"),
    ({"urls": {"1": "/x"}}, "'urls' must list [click, url] pairs")])
def test_urls_on_the_wrong_clicks_are_refused(line, why):
    head, _ = _scenario(["/item/1/a?q=x&page=2"]).split(b"\n", 1)
    session = {"id": 0, "start": 0.0, "class": 0, "clicks": [[0, 0.0], [1, 1.0]], **line}
    with pytest.raises(ScenarioError) as e:
        list(scenario_from_bytes(head + b"\n" + json.dumps(session).encode() + b"\n")
             .sessions())
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_placeholder_named_twice_or_an_unknown_method_is_refused_in_the_header():
    for page, why in (({"url": "/a/{x}/{x}"}, "names a placeholder twice"),
                      ({"url": "/a", "method": "get"}, "method must be one of GET")):
        header = _header()
        header["site"]["pages"][1].update(page)
        with pytest.raises(ValueError, match=why):
            SiteSpec.from_dict(header["site"])


def test_a_site_build_writes_no_file_for_a_template_page(tmp_path):
    report = build_site(SiteSpec.from_dict(_header()["site"]), tmp_path)
    assert report.pages == 1 and report.skipped == {"a page of an application (a URL "
                                                    "template)": 1}
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["a.css",
                                                                          "index.html"]


LOG = "$request_method $request_uri $status $server_protocol $http_content_length"


@pytest.mark.parametrize("cls", ["lan/http11", "lan/h2"])
def test_nginx_logs_each_click_at_its_url_with_its_page_method(tmp_path, cls):
    """A session of template pages (POST, DELETE) and a page: nginx's own log has each request
    with the scenario's method and concrete URL (a POST with Content-Length 0); a POST answered
    303 is followed with a GET, one answered 307 with the same POST (RFC 9110 15.4)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "p.html").write_bytes(b"<html>p</html>")
    header = {"seed": 1, "classes": [c.to_dict() for c in parse_classes(cls)],
              "site": {"pages": [{"url": "/p.html", "size": 14, "objects": []},
                                 {"url": "/form/{id}?q={q}", "size": 2, "objects": [],
                                  "method": "POST"},
                                 {"url": "/see/{id}", "size": 2, "objects": [],
                                  "method": "POST"},
                                 {"url": "/keep/{id}", "size": 2, "objects": [],
                                  "method": "POST"},
                                 {"url": "/form/{id}", "size": 2, "objects": [],
                                  "method": "DELETE"}],
                       "objects": []}}
    urls = [(1, "/form/17?q=a%20b"), (2, "/see/3"), (3, "/keep/4"), (4, "/form/9")]
    out = io.StringIO()
    ScenarioWriter(out, header).write(SessionBatch(
        np.array([0]), np.array([0.0]), np.array([0]), np.array([0, 5]),
        np.arange(5), np.zeros(5), urls=urls))
    scenario = tmp_path / "s.jsonl"
    scenario.write_text(out.getvalue())
    locations = ('location /form/ { return 200 "ok"; }\n'
                 'location /see/ { return 303 /p.html; }\n'
                 'location /keep/ { return 307 /form/1?q=kept; }')
    with nginx(site, tmp_path / "ng", http2=cls.endswith("h2"), log_format=LOG,
               locations=locations) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, fail_on=()))
        got = [line.split(" ") for line in server.log_lines(7, wait=5)]
    proto = "HTTP/2.0" if cls.endswith("h2") else "HTTP/1.1"
    assert s["requests"]["total"] == 7 and s["errors"]["total"] == 0
    assert [g[:3] for g in got] == [
        ["GET", "/p.html", "200"], ["POST", "/form/17?q=a%20b", "200"],
        ["POST", "/see/3", "303"], ["GET", "/p.html", "200"],
        ["POST", "/keep/4", "307"], ["POST", "/form/1?q=kept", "200"],
        ["DELETE", "/form/9", "200"]]
    assert all(g[3] == proto for g in got)
    if proto == "HTTP/1.1":
        assert [g[4] for g in got if g[0] == "POST"] == ["0"] * 4
