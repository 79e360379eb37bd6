"""The shop (tests/apps/shop): a real application for wagon's application workloads, checked
against its own database and nginx's access log, and the user driver that made
tests/data/shop-access.log.gz checked against both."""
from __future__ import annotations

import re
import sqlite3
import time

import numpy as np
import pytest

from .apps.shop import store, users
from .shop import shop

CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]{32})"')


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with shop(tmp_path_factory.mktemp("shop")) as s:
        yield s


def visitor(site, k: int = 0) -> users.Visitor:
    return users.Visitor(site.url, users.address(k), "test", np.random.default_rng(k))


def token(v: users.Visitor, path: str) -> str:
    status, html, _ = v.request("GET", path)
    assert status == 200
    return CSRF.search(html).group(1)


def log_requests(site, expect: int = 0) -> list[tuple[str, str]]:
    """nginx's "$request" and status fields, read with a pattern of this test's, once there are
    ``expect`` (nginx writes a line after its answer is sent: up to 2 s)."""
    deadline = time.monotonic() + 2
    while True:
        rows = re.findall(r'"([A-Z]+ \S+) HTTP/1\.1" (\d{3})', site.access_log.read_text())
        if len(rows) >= expect or time.monotonic() > deadline:
            return rows
        time.sleep(0.02)


def test_pages_reference_three_to_eight_objects_that_nginx_serves(site):
    v = visitor(site)
    for path in ("/", "/search?q=red&page=2", "/item/5", "/item?id=7", "/category/books",
                 "/login", "/cart"):
        status, html, _ = v.request("GET", path)
        objects = set(users.OBJECTS.findall(html))
        assert status == 200 and 3 <= len(objects) <= 8, (path, objects)
        assert all(v.request("GET", o)[0] == 200 for o in objects)
    with sqlite3.connect(site.db) as db:
        names = [n for (n,) in db.execute("SELECT name FROM items WHERE id IN (3, 41)")]
    status, body, _ = v.request("GET", "/api/items?ids=3,41")
    assert status == 200 and all(n in body for n in names)
    assert v.request("GET", "/item/501")[0] == 404
    assert v.request("GET", "/item/" + "9" * 20)[0] == 404             # not a 500
    assert v.request("GET", "/api/items?ids=1," + "9" * 20)[0] == 400
    assert v.request("GET", "/search?q=red&page=x")[0] == 400


def test_a_login_needs_the_forms_csrf_token_and_the_right_password(site):
    before = site.counts()["logins"]
    v = visitor(site, 1)
    good = {"email": store.email(7), "password": store.password(7)}
    assert v.request("POST", "/login", good)[0] == 403                    # no token
    csrf = token(v, "/login")
    assert v.request("POST", "/login", {**good, "csrf_token": "0" * 32})[0] == 403
    assert visitor(site, 2).request("POST", "/login", {**good, "csrf_token": csrf})[0] == 403
    status, html, _ = v.request("POST", "/login", {**good, "password": "no",
                                                   "csrf_token": csrf})
    assert status == 200 and "Wrong e-mail address or password" in html
    assert site.counts()["logins"] == before
    status, _, location = v.request("POST", "/login?next=/cart", {**good, "csrf_token": csrf})
    assert (status, location) == (303, "/cart")
    assert site.counts()["logins"] == before + 1
    assert v.request("GET", f"/account?email={store.email(7)}")[0] == 200
    assert v.request("GET", f"/account?email={store.email(8)}")[0] == 303


def test_cart_and_checkout_write_the_carts_and_orders_tables(site):
    before = site.counts()
    v = visitor(site, 3)
    csrf = token(v, "/item/12")
    for item, qty in ((12, 2), (40, 1)):
        assert v.request("POST", "/cart", {"item": item, "qty": qty, "csrf_token": csrf}
                         )[:3:2] == (303, "/cart")
    assert v.request("POST", "/cart", {"item": 12, "qty": 1})[0] == 403
    assert v.request("POST", "/cart", {"item": 999, "qty": 1, "csrf_token": csrf})[0] == 400
    status, _, location = v.request("POST", "/checkout", {"csrf_token": csrf})
    assert (status, location) == (303, "/login?next=/cart")             # log in first
    csrf = token(v, "/login")
    v.request("POST", "/login", {"email": store.email(9), "password": store.password(9),
                                 "csrf_token": csrf})
    csrf = token(v, "/cart")
    status, _, location = v.request("POST", "/checkout", {"csrf_token": csrf})
    assert status == 303 and re.fullmatch(r"/orders/\d+", location)
    assert v.request("GET", location)[0] == 200
    assert visitor(site, 4).request("GET", location)[0] == 404           # not theirs
    after = site.counts()
    assert (after["carts"] - before["carts"], after["orders"] - before["orders"]) == (2, 1)
    with sqlite3.connect(site.db) as db:
        price = dict(db.execute("SELECT id, price_cents FROM items WHERE id IN (12, 40)"))
        total = db.execute("SELECT total_cents FROM orders WHERE id = ?",
                           (int(location.rsplit("/", 1)[1]),)).fetchone()[0]
    assert total == 2 * price[12] + price[40]


def test_nginx_logs_methods_and_query_strings(site):
    lines = len(log_requests(site))
    v = visitor(site, 5)
    v.request("GET", "/search?q=blue&page=3")
    v.request("POST", "/track?sid=" + "ab" * 16, {"e": "view"})
    v.request("POST", "/login", {"email": store.email(5)})              # no CSRF token
    logged = log_requests(site, lines + 3)
    assert ("GET /search?q=blue&page=3", "200") in logged
    assert ("POST /track?sid=" + "ab" * 16, "204") in logged
    assert ("POST /login", "403") in logged


def test_the_driver_did_what_the_database_and_the_log_record(site):
    before, lines = site.counts(), len(log_requests(site))
    tally = users.drive(site.url, sessions=6, rate=100.0, seed=5, think_scale=0.0)
    assert not tally.errors
    after = site.counts()
    assert {k: after[k] - before[k] for k in after} == {k: tally.actions[k] for k in after}
    logged = log_requests(site, lines + sum(tally.methods.values()))[lines:]
    assert len(logged) == sum(tally.methods.values())
    assert sum(r.startswith("POST ") for r, _ in logged) == tally.methods["POST"]
