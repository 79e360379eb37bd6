"""Requests as the log shows them (issue 37): an application's log (made here: logins and cart
updates as POST, searches and items with queries, e-mail addresses, session ids and tokens in
queries and paths) fits to a model of templates with their methods and value laws; the model
holds none of the log's personal values; synthesis asks for the templates with the log's
method and template mix and each parameter's popularity; a static site models as before."""
from __future__ import annotations

import collections
import io
import json
import re

import numpy as np
import pytest
from scipy import stats

from wagon import load_model, save_model
from wagon.formats.model import MODEL_VERSION
from wagon.formats.scenario import read_scenario
from wagon.logs.paths import template_path
from wagon.logs.templates import DYNAMIC_VALUES, dynamic_prefixes, route_paths, templated
from wagon.modeling import FitOptions, fit_logs
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.export import export_clf, export_httperf

WORDS = [f"kw{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + [f"term{i}" for i in range(30)]
HEX = np.array(list("0123456789abcdef"))
ALNUM = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))


def _request(rng: np.random.Generator, me: dict) -> tuple[str, str]:
    """One request of a client: (method, URL); item ids Zipf over 1..300 (under 4 digits:
    templated by the many-values rule), search words Zipf over 56."""
    u = rng.random()
    item = int(min(rng.zipf(1.3), 300))
    if u < 0.16:
        return "GET", f"/item/{item}" + ("?ref=home" if u < 0.08 else "")
    if u < 0.43:
        word = WORDS[min(int(rng.zipf(1.4)) - 1, len(WORDS) - 1)]
        sort = rng.choice(["price", "name", "new"], p=[.6, .3, .1])
        return "GET", f"/search?q={word}&page={int(rng.integers(1, 4))}&sort={sort}"
    if u < 0.57:
        return "POST", f"/cart/add?item={item}"
    if u < 0.65:
        return "POST", "/login"
    if u < 0.73:
        return "GET", f"/account?sid={me['sid']}&email={me['email']}"
    if u < 0.81:
        return "GET", f"/user/{me['email']}/orders"
    if u < 0.87:
        return "GET", f"/api/session/{me['token']}"
    return "GET", "/"


def app_log(seed: int = 1, clients: int = 300
            ) -> tuple[str, list[tuple[str, str]], dict, collections.Counter]:
    """A combined log of ``clients`` (3 to 11 requests each, one click each: 3 to 40 s apart,
    3 to 8 s after a search: a session each), its (method, URL) requests, each client's
    secrets and the moves between templates."""
    rng = np.random.default_rng(seed)
    lines, requests, secrets, t0 = [], [], {}, 0.0
    moves: collections.Counter = collections.Counter()
    for c in range(clients):
        host = f"10.{c // 250}.{c % 250}.{7 + c % 3}"
        me = secrets[host] = {"email": f"person.{c}@mail{c % 7}.example.com",
                              "sid": "".join(rng.choice(HEX, 32)),
                              "token": "".join(rng.choice(ALNUM, 28)) + "Zz9"}
        t0 += rng.exponential(20)
        t, url, first = t0, "", len(requests)
        for _ in range(int(rng.integers(3, 12))):
            t += rng.uniform(3, 8) if url.startswith("/search") else rng.uniform(3, 40)
            method, url = _request(rng, me)
            hh, rest = divmod(int(t), 3600)
            status = 302 if url == "/login" else 200
            lines.append((t, f'{host} - - [01/Mar/2024:{hh:02d}:{rest // 60:02d}:{rest % 60:02d} '
                             f'+0000] "{method} {url} HTTP/1.1" {status} 2000 "-" '
                             f'"Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"'))
            requests.append((method, url))
        mine = [_template(m, u) for m, u in requests[first:]]
        moves.update(zip(mine, mine[1:]))
    return "".join(line + "\n" for _, line in sorted(lines)), requests, secrets, moves


def _template(method: str, url: str) -> str:
    """The template this test expects of a request of ``app_log`` (written independently of
    the fit: the routes the generator knows)."""
    path, _, query = url.partition("?")
    names = "&".join(f"{k}={{{k}}}" for k in sorted(p.split("=")[0] for p in query.split("&")
                                                    if p))
    path = re.sub(r"^/item/\d+$", "/item/{item}", path)
    path = re.sub(r"^/user/[^/]+/orders$", "/user/{email}/orders", path)
    path = re.sub(r"^/api/session/\w+$", "/api/session/{token}", path)
    return f"{method} {path}" + (f"?{names}" if names else "")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("app")
    text, requests, secrets, moves = app_log()
    (folder / "app.log").write_text(text)
    save_model(fit_logs([str(folder / "app.log")], FitOptions(seed=1)).model,
               folder / "model.json")
    return folder, requests, secrets, load_model(folder / "model.json"), moves


def _shares(keys: list[str]) -> dict[str, float]:
    counts = collections.Counter(keys)
    return {k: n / len(keys) for k, n in counts.items()}


def test_the_model_holds_no_personal_value_and_keeps_the_mixes(app):
    folder, requests, secrets, model, moves = app
    text = (folder / "model.json").read_text()
    found = [v for me in secrets.values() for v in me.values() if v in text]
    found += [v.replace("@", "%40") for me in secrets.values() for v in me.values()
              if v.replace("@", "%40") in text]
    assert found == []
    pages = model.site["pages"]
    got = _shares([f"{p.get('method', 'GET')} {p['url']}" for p in pages
                   for _ in range(p["hits"])])
    want = _shares([_template(m, u) for m, u in requests])
    assert set(got) == set(want)
    assert all(abs(got[k] - want[k]) < 0.01 for k in want), (got, want)
    post = sum(s for k, s in want.items() if k.startswith("POST"))
    query = sum(s for k, s in want.items() if "?" in k)
    assert 0.18 < post < 0.26 and 0.52 < query < 0.66           # the log: 22 %, 59 %
    keys = [f"{p.get('method', 'GET')} {p['url']}" for p in pages]     # the CBMG's arcs
    assert {(keys[a], keys[b]): n for a, b, n in model.site["transitions"]} == moves
    laws = {(p["url"], name): law["law"] for p in pages for name, law in
            p.get("params", {}).items()}
    assert laws[("/account?email={email}&sid={sid}", "sid")] == "opaque"
    assert laws[("/account?email={email}&sid={sid}", "email")] == "opaque"
    assert laws[("/api/session/{token}", "token")] == "opaque"
    assert laws[("/item/{item}", "item")] == "int"
    assert laws[("/search?page={page}&q={q}&sort={sort}", "sort")] == "enum"


def _ranks(values: list[str]) -> np.ndarray:
    """Each value's rank by its frequency in ``values`` (1: the most frequent)."""
    counts = collections.Counter(values)
    rank = {v: r for r, (v, _) in enumerate(counts.most_common(), 1)}
    return np.array([rank[v] for v in values])


@pytest.fixture(scope="module")
def scenario(app):
    folder, _, _, model, _ = app
    out = folder / "s.jsonl"
    with open(out, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=2000, seed=2)), f)
    return read_scenario(out)


def test_synthesis_asks_for_the_logs_templates_methods_and_value_popularity(app, scenario):
    _, requests, _, _, _ = app
    site = scenario.site
    sc = scenario
    clicks = [(site.page_methods[p], site.page_urls[p], s.url(k, site))
              for s in sc.sessions() for k, (p, _) in enumerate(s.clicks)]
    got = _shares([f"{m} {t}" for m, t, _ in clicks])
    want = _shares([_template(m, u) for m, u in requests])
    assert all(abs(got.get(k, 0) - want[k]) < 0.05 for k in want), (got, want)
    assert abs(_shares([m for m, _, _ in clicks]).get("POST", 0)
               - _shares([m for m, _ in requests])["POST"]) < 0.05
    for template, pattern in ((t, site.templates[site.page_urls.index(t)])
                              for t in {t for _, t, _ in clicks} if "{" in t):
        drawn = collections.defaultdict(list)
        for _, t, url in clicks:
            if t == template:
                for name, v in pattern.fullmatch(url).groupdict().items():
                    drawn[name].append(v)
        logged = collections.defaultdict(list)
        for m, u in requests:
            if _template(m, u).split(" ", 1)[1] == template:
                path, _, query = u.partition("?")
                for name, v in [p.split("=") for p in query.split("&") if p] + [
                        ("item", path.rsplit("/", 1)[1])] * path.startswith("/item/"):
                    logged[name].append(v)
        for name, values in drawn.items():
            if name in ("item", "page", "q"):              # popularity by rank, as the log's
                p = stats.ks_2samp(_ranks(values), _ranks(logged[name])).pvalue
                assert p > 0.01, (template, name, p)
            if name in ("item", "page"):                   # int: inside the log's range
                seen = [int(v) for v in logged[name]]
                assert min(seen) <= min(map(int, values)) <= max(map(int, values)) <= max(seen)


def test_the_same_seed_draws_the_same_values(app):
    """The clicks' URLs come from the scenario's seed: the same seed, the same bytes; another
    seed, other values."""
    _, _, _, model, _ = app
    out = []
    for seed in (2, 2, 3):
        buf = io.StringIO()
        synthesize(Generator(model, SynthOptions(sessions=200, seed=seed)), buf)
        out.append(re.findall(r'"urls":(\[.*?\]\])', buf.getvalue()))
    assert out[0] == out[1] and out[0] and out[0] != out[2]


def test_think_times_follow_their_transition_where_the_log_supports_it(app, scenario):
    """After a search the log's users clicked within 3 to 8 s, elsewhere within 3 to 40 s:
    the synthetic think times after a search keep the log's (its gaps counted here)."""
    _, requests, _, _, _ = app
    site = scenario.site
    after: dict[bool, list[float]] = {True: [], False: []}
    for s in scenario.sessions():
        for (a, _), (_, think) in zip(s.clicks, s.clicks[1:]):
            after[site.page_urls[a].startswith("/search")].append(think)
    synth = {k: float(np.median(v)) for k, v in after.items()}
    assert 3 <= synth[True] <= 8 and abs(synth[True] - 5.5) < 1.0, synth
    assert synth[False] > 2 * synth[True], synth


def test_the_exports_ask_for_each_clicks_method_and_url(scenario, tmp_path):
    site = scenario.site
    clicks = collections.Counter((site.page_methods[p], s.url(k, site)) for s in
                                 scenario.sessions() for k, (p, _) in enumerate(s.clicks))
    with open(tmp_path / "x.log", "w") as f:
        export_clf(scenario, f)
    lines = (tmp_path / "x.log").read_text().splitlines()
    assert collections.Counter(tuple(re.search(r'"(\w+) (\S+) HTTP', line).groups())
                               for line in lines) == clicks      # no objects: a line a click
    buf = io.StringIO()
    export_httperf(scenario, buf, "http://127.0.0.1:8080")
    posts = [line for line in buf.getvalue().splitlines() if "method=POST" in line]
    assert len(posts) == sum(n for (m, _), n in clicks.items() if m == "POST") > 0


def test_a_position_with_many_values_becomes_a_placeholder_but_no_static_folder():
    routes = [f"/item/{i}" for i in range(DYNAMIC_VALUES)] + [f"/few/{i}" for i in range(49)]
    folders = [f"/docs/d{i}" for i in range(60)] + [f"/docs/d{i}/a.html" for i in range(60)]
    dynamic = dynamic_prefixes(route_paths(routes + folders))
    assert dynamic == {"/item"}
    assert templated("/item/7", dynamic) == ("/item/{item}", [("item", "7")])
    assert templated("/few/7", dynamic) == ("/few/7", [])
    assert templated("/docs/d7", dynamic) == ("/docs/d7", [])
    assert templated("/a/12345/b/67890?x=1&x=2&print", dynamic) == (
        "/a/{id}/b/{id_2}?print&x={x}&x={x_2}", [("id", "12345"), ("id_2", "67890"),
                                                   ("x", "1"), ("x_2", "2")])


def test_a_static_site_models_its_pages_as_before(sample_model, sample):
    """The sample's pages: the URLs the fit kept before templates had methods and queries
    (its pages verbatim, ``--keep-paths``, templated by the older rule), none dynamic."""
    new = load_model(sample_model[0]).site["pages"]
    old = fit_logs([str(sample)], FitOptions(keep_paths=True)).model.site["pages"]
    assert {(p.get("method", "GET"), p["url"]) for p in new} == {
        ("GET", template_path(p["url"])) for p in old}
    assert not any("params" in p for p in new)


def test_a_model_of_version_6_reads_and_synthesizes(sample_model, tmp_path):
    """A model written before pages had methods, laws and think times per transition: read,
    its pages plain GET pages, its sessions without URLs of their own."""
    doc = json.loads(sample_model[0].read_text())
    assert doc["version"] == MODEL_VERSION and doc["site"]["thinks"]["transitions"]
    doc["version"] = 6
    del doc["site"]["thinks"]
    (tmp_path / "m6.json").write_text(json.dumps(doc))
    gen = Generator(load_model(tmp_path / "m6.json"), SynthOptions(sessions=300, seed=3))
    assert gen.site.thinks is None and gen.site.params is None
    assert set(gen.site.spec.page_methods) == {"GET"}
    assert all(b.urls is None and len(b) for b in gen.batches())
