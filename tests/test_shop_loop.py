"""The application loop (issue 37): the shop's own nginx log (tests/data/shop-access.log.gz)
→ wagon fit → wagon synth → wagon replay --script against the shop on a fresh database. The
observers are the shop's nginx log of the replay (methods, query strings, statuses: read
here with the test's own regular expression and templating) and the shop's database, whose
rows the test predicts by playing each synthetic session's clicks through the shop's rules
(HOOKS.md) itself."""
from __future__ import annotations

import collections
import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.scenario import read_scenario

from .shop import shop

DATA = Path(__file__).parent / "data" / "shop-access.log.gz"
SCRIPT = Path(__file__).parent / "apps" / "shop" / "wagon_script.py"
REQUEST = re.compile(r'"(GET|POST|PUT|DELETE|HEAD) ([^ ]+) HTTP/[0-9.]+" (\d{3}) ')


def _lines(text: str) -> list[tuple[str, str, int]]:
    return [(m[1], m[2], int(m[3])) for m in map(REQUEST.search, text.splitlines()) if m]


def _template(url: str) -> str:
    """The test's own templating: digit runs and hex tokens in the path, query values."""
    path, _, query = url.partition("?")
    path = re.sub(r"/(\d+|[0-9a-f]{16,})(?=/|$)", "/{}", path)
    names = sorted(q.split("=", 1)[0] for q in query.split("&")) if query else []
    return path + ("?" + "&".join(names) if names else "")


def _mix(lines: list[tuple[str, str, int]]) -> dict[str, float]:
    n = len(lines)
    templates = collections.Counter(f"{m} {_template(u)}" for m, u, _ in lines)
    return {"POST": sum(m == "POST" for m, _, _ in lines) / n,
            "query": sum("?" in u for _, u, _ in lines) / n,
            **{k: v / n for k, v in templates.items()}}


def _predicted(scenario: str) -> dict[str, int]:
    """The shop's rows the scenario's clicks make, by the shop's rules (HOOKS.md) and the
    script's: a login row per POST to /login the scenario drew answered 303 (the script opens
    the form first and knows the password; where the scenario drew the login answered with
    the form again, 200, it sends a wrong one: no row, the session as it was); a cart row per POST /cart once the session has shown an item the shop sells
    (ids 1..500: the item the form sends); an order per POST /checkout of a logged-in session
    with a non-empty cart (which empties it); /logout logs out."""
    sc = read_scenario(scenario)
    rows = collections.Counter()
    for s in sc.sessions():
        logged, item, cart = False, False, 0
        for k, (page, _) in enumerate(s.clicks):
            method, url = sc.site.page_methods[page], s.url(k, sc.site)
            path = url.split("?")[0]
            shown = re.fullmatch(r"/item(?:/(\d+)|\?id=(\d+))", url)
            if method == "GET" and shown:
                item = item or 1 <= int(shown[1] or shown[2]) <= 500
            elif method == "GET" and path == "/logout":
                logged = False
            elif method == "POST" and path == "/login" and s.marks(k).get(0) == 303:
                logged, rows["logins"] = True, rows["logins"] + 1
            elif method == "POST" and path == "/cart" and item:
                cart, rows["carts"] = cart + 1, rows["carts"] + 1
            elif method == "POST" and path == "/checkout" and logged and cart:
                cart, rows["orders"] = 0, rows["orders"] + 1
    return dict(rows)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fit") / "shop.json"
    r = CliRunner().invoke(main, ["fit", str(DATA), "-o", str(out), "--workers", "1"])
    assert r.exit_code == 0, r.output
    return out


LINE = re.compile(r'^(\S+) .*?"(\w+) (\S+) HTTP/[0-9.]+" (\d{3}) \S+ "([^"]*)"')


def _followed(text: str) -> tuple[float, float, float]:
    """The share of a combined log's requests that follow a form's redirect (a GET of a page,
    not of the shop's /static/ files, after the same client's non-GET answered 3xx), of GET
    /cart, and of those follow-ups whose Referer is the form's, read from the lines as they
    come."""
    last: dict[str, tuple[str, int, str]] = {}
    n = follows = cart = same_referer = 0
    for m in filter(None, map(LINE.match, text.splitlines())):
        client, method, url, status, referer = m[1], m[2], m[3], int(m[4]), m[5]
        n += 1
        cart += method == "GET" and url == "/cart"
        before = last.get(client)
        if (method == "GET" and not url.startswith("/static/") and before
                and before[0] != "GET" and 300 <= before[1] < 400):
            follows += 1
            same_referer += referer == before[2]
        last[client] = (method, status, referer)
    return follows / n, cart / n, same_referer / max(follows, 1)


def _moves_from(text: str, page: str) -> collections.Counter:
    """What each user did next after ``page`` ("POST /checkout"), read from the lines in the
    order nginx wrote them (one user's requests in the order they were made, whatever the
    second): pages and forms by method and path, but the follow-up of a form's redirect and
    the shop's /static/ files, beacons and XHRs."""
    last: dict[str, tuple[str, int]] = {}
    now: dict[str, str] = {}
    moves: collections.Counter = collections.Counter()
    for m in filter(None, map(LINE.match, text.splitlines())):
        client, method, path, status = m[1], m[2], m[3].split("?")[0], int(m[4])
        if path.startswith(("/static/", "/track", "/api/")):
            continue
        before, last[client] = last.get(client), (method, status)
        if method == "GET" and before and before[0] != "GET" and 300 <= before[1] < 400:
            continue                                              # a form's follow-up
        if now.get(client) == page:
            moves[f"{method} {path}"] += 1
        now[client] = f"{method} {path}"
    return moves


def test_the_forms_of_one_logged_second_are_clicks_in_the_users_order(model):
    """Issue 37: a checkout without a login, the login and the checkout again come in one
    second of the shop's log. The model's moves from POST /checkout are those the log's line
    order shows (0.39 to another checkout when one second's forms went by URL; none in the
    log), each within 1 point."""
    m = json.loads(model.read_text())
    names = [f"{p.get('method', 'GET')} {p['url']}".split("?")[0] for p in m["site"]["pages"]]
    got: collections.Counter = collections.Counter()
    for a, b, n in m["site"]["transitions"]:
        if names[a] == "POST /checkout":
            got[names[b]] += n
    logged = _moves_from(gzip.decompress(DATA.read_bytes()).decode(), "POST /checkout")
    assert logged["POST /checkout"] == 0 and logged["POST /login"] > 400
    for to in set(got) | set(logged):
        share = got[to] / sum(got.values()), logged[to] / sum(logged.values())
        assert abs(share[0] - share[1]) < 0.01, (to, share)


def test_an_export_writes_the_follow_ups_of_forms_as_the_shops_log_has_them(model, tmp_path):
    """Issue 37: the sessions leave a form's follow-up out of the clicks (the replay follows
    the real Location), the model keeps where it went, and the export writes it after the
    form: the shop's own log and the export of a scenario fitted from it have the same share
    of GETs after a form's 303 and of GET /cart (0.6 % in the export before, 4.9 % logged)."""
    scenario, exported = tmp_path / "s.jsonl", tmp_path / "s.log"
    for args in (["synth", str(model), "--sessions", "400", "--seed", "2", "-o", str(scenario)],
                 ["export", str(scenario), "--to", "combined", "--target", "http://shop.test/",
                  "-o", str(exported)]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
    logged = _followed(gzip.decompress(DATA.read_bytes()).decode())
    got = _followed(exported.read_text())
    assert logged[0] > 0.07 and logged[2] == 1.0                  # the shop's: 7.9 %
    assert abs(got[0] - logged[0]) < 0.02 and abs(got[1] - logged[1]) < 0.02, (got, logged)
    assert got[2] == 1.0                                          # the form's Referer


def test_the_shops_log_replayed_through_its_model_reaches_it_as_the_log_did(model, tmp_path):
    scenario = tmp_path / "s.jsonl"
    r = CliRunner().invoke(main, ["synth", str(model), "--sessions", "100", "--seed", "5",
                                  "--speedup", "40", "--classes", "lan/http11", "-o",
                                  str(scenario)])
    assert r.exit_code == 0, r.output
    with shop(tmp_path / "shop") as app:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", app.url,
                                      "--script", str(SCRIPT), "--no-status-marks", "--quiet",
                                      "--json"])
        counts = app.counts()
        text = app.access_log.read_text()
        replayed = _lines(text)
    log_text = gzip.decompress(DATA.read_bytes()).decode()
    logged = _lines(log_text)
    # the browser follows each form's real Location once (the model's follow-up never sent)
    assert abs(_followed(text)[0] - _followed(log_text)[0]) < 0.02
    want, got = _mix(logged), _mix(replayed)
    assert abs(got["POST"] - want["POST"]) < 0.05 and abs(got["query"] - want["query"]) < 0.05
    for t in set(want) | set(got):                                # every template
        assert abs(got.get(t, 0.0) - want.get(t, 0.0)) < 0.05, (t, got.get(t), want.get(t))
    assert not [x for x in replayed if x[2] == 403]               # no CSRF failure
    assert counts == _predicted(str(scenario)), r.output
