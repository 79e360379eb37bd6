"""Visitors of the shop, independent of wagon: http.client connections with cookie jars.

Each session is one visitor (its own loopback address 127.1.x.y, a browser's user agent, one
keep-alive connection, a cookie jar) walking a hand-written Customer Behavior Model Graph
(Menascé): ``CBMG`` gives, for each state, the probabilities of the next one. A state is a
click: the page's request (its redirects followed), then, like a browser, the page's static
objects it has not fetched yet in this session and the JSON its script asks for (item pages).
Forms are read like a browser reads them: the CSRF token from the hidden input, the action.

Values taken from users' data, as real sites leak them into URLs: logged-in visitors follow
the shop's link ``/account?email=<their address>`` (``@`` as is); "tracked" sessions (``TRACKED``) send an analytics beacon
``POST /track?sid=<a random 32-hex token>`` after each page (``navigator.sendBeacon``). A privacy test greps a model for them.

Think times are lognormal (median 20 s, σ 0.5) scaled by ``--think-scale`` (0.25: a median of
5 s, so that clicks stay above the log's one-second resolution and wagon fit's 2 s click
threshold); sessions start as a Poisson process of ``--rate`` per second.

    python -m tests.apps.shop.users --sessions 2000 --rate 8 --out FILE.log.gz
"""
from __future__ import annotations

import argparse
import gzip
import http.client
import re
import shutil
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode, urljoin, urlsplit

import numpy as np

from ...shop import shop
from . import store

#: next state's probabilities from each state (each row sums to 1); "exit" ends the session
CBMG: dict[str, dict[str, float]] = {
    "entry": {"home": .40, "search": .25, "item": .20, "category": .15},
    "home": {"search": .30, "item": .25, "category": .20, "login": .15, "exit": .10},
    "search": {"search": .25, "item": .50, "category": .05, "login": .08, "exit": .12},
    "category": {"item": .55, "category": .15, "search": .10, "login": .08, "exit": .12},
    "item": {"add": .45, "item": .12, "search": .15, "category": .10, "login": .08,
             "exit": .10},
    "login": {"search": .30, "item": .35, "category": .20, "account": .10, "exit": .05},
    "add": {"checkout": .35, "item": .25, "search": .20, "cart": .10, "exit": .10},
    "cart": {"checkout": .50, "item": .30, "exit": .20},
    "checkout": {"account": .20, "home": .20, "logout": .20, "exit": .40},
    "account": {"home": .30, "search": .20, "logout": .20, "exit": .30},
    "logout": {"exit": 1.0},
}
TRACKED = 0.55         # share of sessions sending analytics beacons (consent given)
WRONG_PASSWORD = 0.05  # share of logins whose first try has a wrong password
GONE = 0.05            # share of item pages entered from outside for an item no longer sold
AGENTS = ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0.0.0 Safari/537.36",
          "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like "
          "Gecko) Version/17.5 Safari/605.1.15")
OBJECTS = re.compile(r'(?:src|href)="(/static/[^"]+)"')
CSRF = re.compile(r'<input type="hidden" name="csrf_token" value="([^"]+)">')
ACTION = re.compile(r'<form action="([^"]+)" method="post">')
ITEM_LINK = re.compile(r'href="(/item(?:/\d+|\?id=\d+))"')
RELATED = re.compile(r'data-src="([^"]+)"')
NEXT = re.compile(r'href="([^"]+page=\d+)">Next<')
ACCOUNT = re.compile(r'href="(/account\?email=[^"]+)"')
ITEM_FIELD = re.compile(r'name="item" value="(\d+)"')
CATEGORY_LINK = re.compile(r'in <a href="(/category/\w+)"')


@dataclass
class Tally:
    """What the visitors did: requests by method and status, and the app's actions that
    succeeded as the answers said (the database is the independent observer)."""

    methods: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    actions: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, other: Tally) -> None:
        with self.lock:
            self.methods += other.methods
            self.statuses += other.statuses
            self.actions += other.actions
            self.errors += other.errors


class Visitor:
    """One session's browser: a connection from its own address, cookies, a cache of objects."""

    def __init__(self, base: str, address: str, agent: str, rng: np.random.Generator) -> None:
        parts = urlsplit(base)
        self.base, self.host, self.port = base, parts.hostname, parts.port
        self.address, self.agent, self.rng = address, agent, rng
        self.jar, self.cache, self.tally = CookieJar(), set(), Tally()
        self.conn: http.client.HTTPConnection | None = None
        self.page, self.html = "", ""         # the page on screen: its URL and text

    def request(self, method: str, path: str, form: dict | None = None,
                referer: str | None = None) -> tuple[int, str, str]:
        """One request (a new connection if the server closed the kept one): status, body,
        Location."""
        url = urljoin(self.base, path)
        req = urllib.request.Request(url, method=method)
        self.jar.add_cookie_header(req)
        headers = {"User-Agent": self.agent, **req.unredirected_hdrs}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if referer:
            headers["Referer"] = referer
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30,
                                                       source_address=(self.address, 0))
            try:
                self.conn.request(method, path, body, headers)
                response = self.conn.getresponse()
                text = response.read().decode(errors="replace")
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        self.jar.extract_cookies(response, req)
        self.tally.methods[method] += 1
        self.tally.statuses[response.status] += 1
        return response.status, text, response.getheader("Location", "")

    def click(self, method: str, path: str, form: dict | None = None) -> tuple[int, str]:
        """A page as a browser shows it: redirects followed (GET), then its new objects and
        the JSON its script loads. Returns the first answer's status and the final URL."""
        status, text, location = self.request(method, path, form, self.page or None)
        first, url = status, path
        while status in (301, 302, 303):
            url = urlsplit(location)._replace(scheme="", netloc="").geturl() or "/"
            status, text, location = self.request("GET", url, None, self.page or None)
        self.page, self.html = urljoin(self.base, url), text
        for obj in OBJECTS.findall(text):
            if obj not in self.cache:
                self.cache.add(obj)
                self.request("GET", obj, None, self.page)
        for api in RELATED.findall(text):
            self.request("GET", api.replace("&amp;", "&"), None, self.page)
        return first, url

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def zipf(rng: np.random.Generator, n: int, s: float = 1.0) -> int:
    """A rank in 1..n with probability ∝ 1/rank^s (popular items, frequent words)."""
    p = 1.0 / np.arange(1, n + 1) ** s
    return int(rng.choice(n, p=p / p.sum())) + 1


class Session:
    """A visitor walking ``CBMG``: each state's requests, think times between clicks."""

    def __init__(self, visitor: Visitor, user: int, think_scale: float) -> None:
        self.v, self.user, self.think_scale = visitor, user, think_scale
        self.rng = visitor.rng
        self.logged_in = False
        self.sid = self.rng.bytes(16).hex() if self.rng.random() < TRACKED else None

    def run(self) -> None:
        state = "entry"
        while True:
            options = CBMG[state]
            state = str(self.rng.choice(list(options), p=list(options.values())))
            if state == "exit":
                return
            getattr(self, state)()
            if self.sid:
                self.v.request("POST", f"/track?sid={self.sid}", {"e": "view"}, self.v.page)
            time.sleep(self.think_scale * self.rng.lognormal(np.log(20.0), 0.5))

    def _on_page(self, pattern: re.Pattern) -> list[str]:
        return [m.replace("&amp;", "&") for m in pattern.findall(self.v.html)]

    def home(self) -> None:
        self.v.click("GET", "/")

    def search(self) -> None:
        following = self._on_page(NEXT)
        if "/search?" in self.v.page and following and self.rng.random() < 0.4:
            self.v.click("GET", following[0])
            return
        word = store.WORDS[zipf(self.rng, len(store.WORDS)) - 1]
        self.v.click("GET", f"/search?{urlencode({'q': word, 'page': 1})}")

    def item(self) -> None:
        links = self._on_page(ITEM_LINK)
        if "/item" in self.v.page:                # the related items the script showed
            links = [f"/item/{i}" for i in self._related()]
        if links:
            self.v.click("GET", str(self.rng.choice(links)))
        elif self.rng.random() < GONE:            # a stale link: 404
            self.v.click("GET", f"/item/{store.ITEMS + int(self.rng.integers(1, 100))}")
        else:                                     # from outside: by popularity
            self.v.click("GET", f"/item/{zipf(self.rng, store.ITEMS)}")

    def _related(self) -> list[str]:
        found = self._on_page(RELATED)
        return found[0].split("ids=")[1].split(",") if found else []

    def category(self) -> None:
        following = self._on_page(NEXT)
        own = self._on_page(CATEGORY_LINK)
        if "/category/" in self.v.page and following and self.rng.random() < 0.4:
            self.v.click("GET", following[0])
        elif own and self.rng.random() < 0.5:
            self.v.click("GET", own[0])
        else:
            self.v.click("GET", f"/category/{self.rng.choice(store.CATEGORIES)}")

    def login(self, path: str = "/login") -> None:
        if self.logged_in:
            self.account()
            return
        if "<h1>Log in</h1>" not in self.v.html:    # not on the form yet
            self.v.click("GET", path)
        if self.rng.random() < WRONG_PASSWORD:
            self._submit_login("wrong password")
        status, _ = self._submit_login(store.password(self.user))
        if status == 303:
            self.logged_in = True
            self.v.tally.actions["logins"] += 1

    def _submit_login(self, password: str) -> tuple[int, str]:
        form = {"email": store.email(self.user), "password": password,
                "csrf_token": self._on_page(CSRF)[0]}
        return self.v.click("POST", self._on_page(ACTION)[0], form)

    def add(self) -> None:
        if "/item" not in self.v.page:
            self.item()
        item = self._on_page(ITEM_FIELD)
        if not item:                              # a 404: nothing to add
            return
        form = {"csrf_token": self._on_page(CSRF)[0], "item": item[0],
                "qty": str(1 + self.rng.poisson(0.3))}
        if self.v.click("POST", "/cart", form)[0] == 303:
            self.v.tally.actions["carts"] += 1

    def cart(self) -> None:
        self.v.click("GET", "/cart")

    def checkout(self) -> None:
        if not self.v.page.endswith("/cart"):
            self.cart()
        if "<td>" not in self.v.html:              # an empty cart: nothing to order
            return
        status, url = self.v.click("POST", "/checkout", {"csrf_token": self._on_page(CSRF)[0]})
        if url.startswith("/login"):              # the shop asks to log in first
            self.login(url)
            status, url = self.v.click("POST", "/checkout",
                                       {"csrf_token": self._on_page(CSRF)[0]})
        if url.startswith("/orders/"):
            self.v.tally.actions["orders"] += 1

    def account(self) -> None:
        link = self._on_page(ACCOUNT)             # the shop's own link: the address raw
        if self.logged_in and link:
            self.v.click("GET", link[0])
        else:
            self.home()

    def logout(self) -> None:
        self.v.click("GET", "/logout")
        self.logged_in = False


def address(k: int) -> str:
    """Session ``k``'s loopback address: 127.1.0.1, 127.1.0.2, … (254 a /24)."""
    return f"127.1.{k // 254}.{k % 254 + 1}"


def visit(base: str, k: int, seed: np.random.SeedSequence, think_scale: float,
          tally: Tally) -> None:
    """Session ``k``: a visitor as a user drawn uniformly from the shop's users."""
    rng = np.random.default_rng(seed)
    visitor = Visitor(base, address(k), AGENTS[int(rng.integers(len(AGENTS)))], rng)
    try:
        Session(visitor, int(rng.integers(1, store.USERS + 1)), think_scale).run()
    except Exception as e:                    # reported by main, never lost
        visitor.tally.errors.append(f"session {k}: {type(e).__name__}: {e}")
    finally:
        visitor.close()
        tally.add(visitor.tally)


def drive(base: str, sessions: int, rate: float, seed: int = 37,
          think_scale: float = 0.25) -> Tally:
    """``sessions`` visitors arriving as a Poisson process of ``rate`` a second, each in a
    thread of its own; returns once all have left."""
    root = np.random.SeedSequence(seed)
    starts = np.cumsum(np.random.default_rng(root).exponential(1 / rate, sessions))
    tally, threads, t0 = Tally(), [], time.monotonic()
    for k, (start, child) in enumerate(zip(starts, root.spawn(sessions))):
        time.sleep(max(0.0, t0 + start - time.monotonic()))
        thread = threading.Thread(target=visit, args=(base, k, child, think_scale, tally))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return tally


LINE = re.compile(r'^(\S+) \S+ \S+ \[[^]]+\] "(\S+) (\S+) [^"]*" (\d{3}) ')


def describe(log: Path) -> dict:
    """The log's figures, read from nginx's lines: lines, method mix, query share, statuses,
    clients (one session each)."""
    rows = [LINE.match(line).groups() for line in log.read_text().splitlines()]
    n = len(rows)
    return {"lines": n,
            "methods": {m: f"{c / n:.1%}" for m, c in Counter(r[1] for r in rows).items()},
            "with_query": f"{sum('?' in r[2] for r in rows) / n:.1%}",
            "statuses": dict(sorted(Counter(r[3] for r in rows).items())),
            "static": f"{sum(r[2].startswith('/static/') for r in rows) / n:.1%}",
            "clients": len({r[0] for r in rows})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=8.0, help="sessions started a second")
    parser.add_argument("--think-scale", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/shop-run"))
    parser.add_argument("--out", type=Path, required=True, help="the nginx log, gzipped")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    with shop(args.workdir) as s:
        tally = drive(s.url, args.sessions, args.rate, args.seed, args.think_scale)
        time.sleep(1)                         # nginx writes a line once its answer is sent
        counts = s.counts()
        data = s.access_log.read_bytes()
    args.out.write_bytes(gzip.compress(data, 9, mtime=0))
    print({"driver": dict(tally.actions), "db": counts, "errors": len(tally.errors),
           **describe(s.access_log)})
    for error in tally.errors[:10]:
        print(error)


if __name__ == "__main__":
    main()
