"""Emulated users as the server sees them: their own address, browser, Referer and cookies.

Observers: published User-Agent strings (MDN's examples) and RFC 6265's cookie examples; a
log written by hand with known people and browsers; nginx's own combined log (read with the
test's own regular expression, tests/servers.py) against what the scenario says each session
asks for."""
from __future__ import annotations

import collections
import ipaddress
import json

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.model import Model, ModelError, validate
from wagon.formats.scenario import ScenarioError, read_scenario
from wagon.formats.site import build_site
from wagon.logs.agents import FAMILIES, family
from wagon.logs.robots import robot_rules
from wagon.replay import ReplayOptions, replay
from wagon.replay.identity import LOOPBACK_POOL, CookieJar
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.agents import USER_AGENTS
from wagon.synth.site import resolve_site

from .servers import nginx
from .test_synth import batches, hand_model

# ---- browser families ----------------------------------------------------------------------
# User-Agent strings as MDN's User-Agent reference and its browser-detection guide print them
PUBLISHED = [
    ("Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", "firefox"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X x.y; rv:42.0) Gecko/20100101 Firefox/42.0",
     "firefox"),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/51.0.2704.103 Safari/537.36", "chrome"),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/91.0.4472.124 Safari/537.36 Edg/91.0.864.59", "edge"),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/51.0.2704.106 Safari/537.36 OPR/38.0.2220.41", "opera"),
    ("Opera/9.80 (Macintosh; Intel Mac OS X; U; en) Presto/2.2.15 Version/10.00", "opera"),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 13_5_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, "
     "like Gecko) Version/13.1.1 Mobile/15E148 Safari/604.1", "safari"),
    ("Mozilla/5.0 (compatible; MSIE 9.0; Windows Phone OS 7.5; Trident/5.0; IEMobile/9.0)",
     "msie"),
    ("Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko", "msie"),
    ("Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)", "msie"),
    ("Mozilla/4.76 [en] (X11; U; Linux 2.2.16-22 i686)", "netscape"),
    ("Mozilla/5.0 (Linux; Android 13; SM-S901B) AppleWebKit/537.36 (KHTML, like Gecko) "
     "SamsungBrowser/22.0 Chrome/111.0.5563.116 Mobile Safari/537.36", "samsung"),
    ("-", "other"),
    ("", "other"),
]


@pytest.mark.parametrize("agent,expected", PUBLISHED)
def test_published_agents_fall_in_their_family(agent, expected):
    assert family(agent) == expected


def test_each_family_sends_an_agent_of_that_family_and_no_robot():
    robots = robot_rules(None)
    assert set(USER_AGENTS) == set(FAMILIES)
    for name, agent in USER_AGENTS.items():
        assert family(agent) == name
        assert robots.category(agent) is None, agent


def _people_log() -> bytes:
    """Six people (three Firefox, two Chrome, one old MSIE) and a crawler, a few clicks each."""
    agents = [PUBLISHED[0][0]] * 3 + [PUBLISHED[2][0]] * 2 + [PUBLISHED[9][0]] + [
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"]
    rows = []
    for n, agent in enumerate(agents):
        for k in range(3):
            t = n * 37 + k * 11
            rows.append(f'10.9.0.{n + 1} - - [01/Aug/1995:00:{t // 60:02d}:{t % 60:02d} +0000] '
                        f'"GET /p{k}.html HTTP/1.0" 200 {900 + k} "-" "{agent}"')
    return ("\n".join(rows) + "\n").encode()


def test_the_model_keeps_browser_families_and_never_an_agent(tmp_path):
    log = tmp_path / "people.log"
    log.write_bytes(_people_log())
    r = CliRunner().invoke(main, ["fit", str(log), "-o", str(tmp_path / "m.json")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "m.json").read_text()
    assert json.loads(text)["agents"] == {"sessions": {"firefox": 3, "chrome": 2, "msie": 1}}
    for secret in ("Gecko/", "AppleWebKit", "MSIE", "Googlebot"):
        assert secret not in text


def test_a_model_with_agent_strings_is_refused():
    doc = hand_model().data | {"version": 3,
                               "agents": {"sessions": {"Mozilla/5.0 (X11)": 3}}}
    with pytest.raises(ModelError, match="agents.sessions"):
        validate(doc)


# ---- synthesis -----------------------------------------------------------------------------
def _model_with_agents(counts: dict[str, int]) -> Model:
    m = hand_model()
    m.data.update(version=3, agents={"sessions": counts})
    return m


def test_sessions_draw_browsers_in_the_model_shares():
    counts = {"firefox": 600, "chrome": 300, "msie": 100}
    gen = Generator(_model_with_agents(counts), SynthOptions(sessions=20_000, seed=2))
    header = gen.header()["agents"]
    drawn = np.concatenate([b.agents for b in gen.batches()])
    n = len(drawn)
    for i, a in enumerate(header):
        p = counts[a["family"]] / 1000
        assert abs((drawn == i).mean() - p) < 4 * np.sqrt(p * (1 - p) / n), a["family"]
        assert family(a["user_agent"]) == a["family"]


def test_without_an_agent_mix_the_browser_follows_the_class_protocol():
    gen = Generator(hand_model(), SynthOptions(sessions=400, seed=1, classes=(
        "modem/http10x4,t1-dsl/http11x2,wan/pipeline")))
    header = gen.header()["agents"]
    for b in gen.batches():
        fams = [header[a]["family"] for a in b.agents]
        assert {(c, f) for c, f in zip(b.classes.tolist(), fams)} == {
            (0, "netscape"), (1, "firefox"), (2, "opera")}


def _scenario_lines(tmp_path, **opts) -> list[str]:
    path = tmp_path / "s.jsonl"
    with open(path, "w") as f:
        synthesize(Generator(_model_with_agents({"firefox": 1, "chrome": 1}),
                             SynthOptions(sessions=5, seed=1, **opts)), f)
    return path.read_text().splitlines()


@pytest.mark.parametrize("mutate,message", [
    (lambda h, s: h["agents"][0].update(user_agent="x\r\nX-Injected: 1"), "printable ASCII"),
    (lambda h, s: h["agents"].append({"family": "chrome"}), "printable ASCII"),
    (lambda h, s: s.update(agent=9), "agent 9 does not exist"),
    (lambda h, s: s.update(agent=True), "agent True does not exist"),
])
def test_scenario_agents_are_checked(tmp_path, mutate, message):
    lines = _scenario_lines(tmp_path)
    header, first = json.loads(lines[0]), json.loads(lines[1])
    mutate(header, first)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(header), json.dumps(first)] + lines[2:]) + "\n")
    with pytest.raises(ScenarioError, match=message):
        list(read_scenario(bad).sessions())


# ---- cookies (RFC 6265's own examples, §3.1) -------------------------------------------------
def test_cookie_jar_follows_rfc6265_examples():
    jar = CookieJar()
    jar.update([b"SID=31d4d96e407aad42; Path=/; Domain=example.com"], "/login")
    jar.update([b"lang=en-US; Path=/; Domain=example.com"], "/login")
    assert jar.header("/") == "SID=31d4d96e407aad42; lang=en-US"
    jar.update([b"lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT"], "/")      # deleted
    assert jar.header("/any") == "SID=31d4d96e407aad42"
    jar.update([b"SID=1; Max-Age=0; Path=/"], "/")                           # deleted too
    assert jar.header("/") is None
    jar.update([b"token=abc; Path=/; Secure; HttpOnly"], "/")                # never over HTTP
    assert jar.header("/") is None
    jar.update([b"d=1; Path=/docs"], "/")
    assert jar.header("/docs/web") == "d=1" and jar.header("/docsx") is None
    jar.update([b"here=2"], "/a/b/page.html")            # default path: the directory /a/b
    assert jar.header("/a/b/c.png") == "here=2" and jar.header("/a/x.png") is None
    jar.update([b"\x00bad"], "/")                        # ignored, as browsers ignore it
    assert jar.header("/a/b/") == "here=2"


# ---- against nginx -------------------------------------------------------------------------
def _served_scenario(tmp_path, classes: str, sessions: int = 24) -> tuple[str, object]:
    """A scenario of ``sessions`` with a browser mix, and nginx's site for it; played 1000
    times faster than modeled (what the server sees of a client does not depend on its pace)."""
    model = _model_with_agents({"firefox": 5, "chrome": 3, "safari": 2})
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=sessions, seed=4, pages=30,
                                                 classes=classes, speedup=1000)), f)
    build_site(resolve_site(model, pages=30).spec, tmp_path / "site")
    return str(scenario), read_scenario(scenario)


def _expected(sc, base: str) -> dict[int, collections.Counter]:
    """Per session id: the (uri, referer) pairs a browser sends for its clicks."""
    site, out = sc.site, {}
    for s in sc.sessions():
        pairs, previous = [], None
        for page, _ in s.clicks:
            url = site.page_urls[page]
            linked = previous is not None and page in site.page_links[previous]
            pairs.append((url, base + site.page_urls[previous].lstrip("/") if linked else None))
            pairs += [(site.object_urls[o], base + url.lstrip("/"))
                      for o in site.page_objects[page]]
            previous = page
        out[s.id] = collections.Counter(pairs)
    return out


def test_each_session_is_a_client_of_its_own_to_nginx(tmp_path):
    scenario, sc = _served_scenario(tmp_path, "lan/http10x4,lan/http11x2,lan/pipeline")
    with nginx(tmp_path / "site", tmp_path / "ng", set_cookie="sid=$request_id; Path=/") as ng:
        s = replay(scenario, ReplayOptions(target=ng.url, emulation=False))
        want = _expected(sc, ng.url)
        hits = ng.combined()
    assert s["errors"]["total"] == 0 and len(hits) == sum(sum(c.values()) for c in want.values())
    by_address = collections.defaultdict(list)
    for h in hits:
        by_address[h.address].append(h)
    first = int(LOOPBACK_POOL.network_address) + 1
    sessions = {s.id: s for s in sc.sessions()}
    assert len(by_address) == len(sessions)
    cookies_of: dict[str, str] = {}
    for address, rows in by_address.items():
        sid = int(ipaddress.IPv4Address(address)) - first
        assert ipaddress.IPv4Address(address) in LOOPBACK_POOL
        assert collections.Counter((h.uri, h.referer) for h in rows) == want[sid]
        agent = sc.agents[sessions[sid].agent]["user_agent"]
        assert {h.agent for h in rows} == {agent}
        rows.sort(key=lambda h: h.msec)
        assert rows[0].cookie is None                     # the session's first request
        assert all(h.cookie and h.cookie.startswith("sid=") for h in rows[1:])
        for h in rows[1:]:
            assert cookies_of.setdefault(h.cookie, address) == address   # never shared
    assert s["identity"]["sources"].endswith(str(LOOPBACK_POOL))


def test_no_identity_is_one_anonymous_client(tmp_path):
    scenario, _ = _served_scenario(tmp_path, "lan/http11", sessions=6)
    with nginx(tmp_path / "site", tmp_path / "ng", set_cookie="sid=1") as ng:
        s = replay(scenario, ReplayOptions(target=ng.url, emulation=False, identity=False))
        hits = ng.combined()
    assert s["identity"] is None and hits
    assert {(h.address, h.agent, h.referer, h.cookie) for h in hits} == {
        ("127.0.0.1", "wagon-replay", None, None)}


def test_listed_source_addresses_take_turns(tmp_path):
    scenario, sc = _served_scenario(tmp_path, "lan/http11", sessions=6)
    with nginx(tmp_path / "site", tmp_path / "ng") as ng:
        r = CliRunner().invoke(main, ["replay", scenario, "--target", ng.url, "--quiet",
                                      "--no-emulation", "--source-addresses",
                                      "127.0.0.7, 127.0.0.8"])
        hits = ng.combined()
    assert r.exit_code == 0, r.output
    assert "from 2 listed addresses" in r.output
    want = collections.Counter()
    for s in sc.sessions():
        want[f"127.0.0.{7 + s.id % 2}"] += sum(1 + len(sc.site.page_objects[p])
                                               for p, _ in s.clicks)
    assert collections.Counter(h.address for h in hits) == want


@pytest.mark.parametrize("spec,message", [
    ("192.0.2.1", "192.0.2.1 is not an address of this machine"),
    ("abc", "'abc' is not an IPv4 address"),
    ("127.0.0.0/33", "--source-addresses '127.0.0.0/33'"),
    (" , ", "no address given"),
])
def test_bad_source_addresses_are_one_line_errors(tmp_path, spec, message):
    scenario, _ = _served_scenario(tmp_path, "lan/http11", sessions=2)
    r = CliRunner().invoke(main, ["replay", scenario, "--target", "http://127.0.0.1:9/",
                                  "--source-addresses", spec])
    assert r.exit_code == 2 and message in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


# ---- a target with a path ------------------------------------------------------------------
def test_a_target_path_prefixes_every_request(tmp_path):
    """The site built under /shop/ of nginx's root: every request, and every Referer, goes
    under /shop/ (nginx answers 404 to anything else)."""
    scenario, sc = _served_scenario(tmp_path, "lan/http11,lan/http10x2", sessions=8)
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "site").rename(root / "shop")
    with nginx(root, tmp_path / "ng") as ng:
        s = replay(scenario, ReplayOptions(target=ng.url + "shop/", emulation=False))
        hits = ng.combined()
    want = collections.Counter()
    for session in sc.sessions():
        for (uri, _), n in _expected(sc, ng.url).get(session.id).items():
            want["/shop" + uri] += n
    assert s["errors"]["total"] == 0 and collections.Counter(h.uri for h in hits) == want
    assert all(h.referer is None or h.referer.startswith(ng.url + "shop/") for h in hits)


@pytest.mark.parametrize("target,message", [
    ("http://127.0.0.1:9/shop/?x=1", "a target has no query or fragment"),
    ("http://127.0.0.1:99999/", "out of range"),
    ("http://127.0.0.1:0/", "port 0 is no server's port"),
    ("http://user:secret@127.0.0.1:9/", "a target has no user name or password"),
    ("ws://127.0.0.1/", "give an http://HOST[:PORT]/[PREFIX/] or https://... URL"),
])
def test_a_target_wagon_cannot_use_is_one_line(tmp_path, target, message):
    scenario, _ = _served_scenario(tmp_path, "lan/http11", sessions=2)
    r = CliRunner().invoke(main, ["replay", scenario, "--target", target])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
