"""Scripted behaviour where logs are silent (``wagon replay --script``): a login with a CSRF
token taken from a form, form bodies with the click's URL values and a data file's rows,
checks counted as failures of their own kind. The observer is a small application written
here on the standard library's HTTP server: it checks each token against the session cookie
it issued and records every login and cart row it accepted. (The script names the site's
``/cart/{id}`` as ``/cart/{n}``: placeholders stand by position.)"""
from __future__ import annotations

import io
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import numpy as np
import pytest
from click.testing import CliRunner

from wagon import read_results
from wagon.cli import main
from wagon.formats.classes import parse_classes
from wagon.formats.scenario import ScenarioWriter, SessionBatch
from wagon.replay import ReplayOptions, replay

PAGES = [("GET", "/login"), ("POST", "/login"), ("GET", "/home"), ("POST", "/cart/{id}")]


class _App(BaseHTTPRequestHandler):
    """GET /login: a form with a token bound to a new session cookie; POST /login: 303 to
    /home when the token and password are right, 403 otherwise; POST /cart/N: a cart row
    for the logged-in session (403 without its token)."""

    sessions: dict[str, dict] = {}
    logins: list[str] = []
    carts: list[tuple[str, int]] = []
    lock = threading.Lock()

    def log_message(self, *args) -> None:
        pass

    def _send(self, code: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _session(self) -> tuple[str | None, dict | None]:
        sid = next((c.split("=", 1)[1] for c in self.headers.get("Cookie", "").split("; ")
                    if c.startswith("sid=")), None)
        return sid, self.sessions.get(sid)

    def _form(self) -> dict[str, str]:
        n = int(self.headers.get("Content-Length", 0))
        return {k: v[0] for k, v in parse_qs(self.rfile.read(n).decode()).items()}

    def do_GET(self) -> None:
        if self.path == "/login":
            sid, token = secrets.token_hex(8), secrets.token_hex(16)
            with self.lock:
                self.sessions[sid] = {"token": token, "user": None}
            page = (f'<form method="post"><input type="hidden" value="{token}" '
                    f'name="csrf_token"><input name="email"></form>').encode()
            self._send(200, page, {"Set-Cookie": f"sid={sid}; Path=/"})
        elif self.path == "/home":
            _, s = self._session()
            self._send(200, f"welcome {s['user']}".encode() if s and s["user"] else b"who?")
        else:
            self._send(404)

    def do_POST(self) -> None:
        _, s = self._session()
        form = self._form()
        if s is None or form.get("csrf_token") != s["token"]:
            self._send(403, b"csrf")
        elif self.path == "/login":
            if form.get("password") != "pw-" + form.get("email", ""):
                self._send(200, b"wrong password")
                return
            with self.lock:
                s["user"] = form["email"]
                self.logins.append(form["email"])
            self._send(303, b"", {"Location": "/home"})
        elif self.path.startswith("/cart/") and s["user"]:
            with self.lock:
                self.carts.append((s["user"], int(form["item"])))
            self._send(200, json.dumps({"ok": True, "item": int(form["item"])}).encode(),
                       {"Content-Type": "application/json"})
        else:
            self._send(403, b"not logged in")


@pytest.fixture
def app():
    _App.sessions, _App.logins, _App.carts = {}, [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _App)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, _App
    server.shutdown()
    server.server_close()


def _scenario(tmp_path, sessions: int, clicks: tuple[int, ...] = (2, 3, 3),
              urls: list[tuple[int, str]] | None = None) -> str:
    """Sessions of ``clicks`` (PAGES' indices; by default the home page then two cart
    additions, items 3 + i and 40 + i)."""
    header = {"seed": 1, "classes": [c.to_dict() for c in parse_classes("lan/http11")],
              "site": {"pages": [{"url": u, "size": 10, "objects": [], "method": m}
                                 for m, u in PAGES], "objects": []}}
    out = io.StringIO()
    n, k = sessions, len(clicks)
    ScenarioWriter(out, header).write(SessionBatch(
        np.arange(n), np.arange(n) * 0.02, np.zeros(n, int), np.arange(n + 1) * k,
        np.tile(clicks, n), np.tile([0.0] + [0.01] * (k - 1), n),
        urls=urls if urls is not None else [(3 * i + j, f"/cart/{item}") for i in range(n)
                                            for j, item in ((1, 3 + i), (2, 40 + i))]))
    path = tmp_path / "s.jsonl"
    path.write_text(out.getvalue())
    return str(path)


SCRIPT = '''
from wagon.replay.script import Script, contains, form_field, json_field
script = Script(start=["GET /login", "POST /login"])
script.data("users", "users.csv")
script.on("GET /login", extract={{"csrf": form_field("csrf_token")}})
script.on("POST /login", form={{"email": "{{users.email}}", "password": "pw-{{users.email}}",
                                "csrf_token": "{{csrf}}"}}, check=contains("{welcome}"))
script.on("POST /cart/{{n}}", form={{"item": "{{n}}", "csrf_token": "{{csrf}}"}},
          check=json_field("ok", True))
'''


def _files(tmp_path, welcome: str = "welcome") -> str:
    (tmp_path / "users.csv").write_text("email\n" + "".join(f"u{k}@shop.test\n"
                                                            for k in range(4)))
    path = tmp_path / "shop.py"
    path.write_text(SCRIPT.format(welcome=welcome))
    return str(path)


def test_a_scripted_login_and_forms_reach_the_application_as_a_browser_would(app, tmp_path):
    server, seen = app
    s = replay(_scenario(tmp_path, 6), ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/", script=_files(tmp_path),
        results=str(tmp_path / "r.csv"), fail_on=()))
    rows = read_results(tmp_path / "r.csv")
    assert s["errors"]["total"] == 0, s["errors"]
    assert sorted(seen.logins) == sorted(f"u{i % 4}@shop.test" for i in range(6))
    assert sorted(seen.carts) == sorted([(f"u{i % 4}@shop.test", 3 + i) for i in range(6)] +
                                        [(f"u{i % 4}@shop.test", 40 + i) for i in range(6)])
    # each session: GET /login, POST /login → 303 → GET /home, then its three clicks
    assert len(rows) == s["requests"]["total"] == 6 * 6
    assert rows.groupby("session")["url"].apply(list).tolist() == [
        ["/login", "/login", "/home", "/home", f"/cart/{3 + i}", f"/cart/{40 + i}"]
        for i in range(6)]


def test_a_failed_check_or_extraction_is_a_failure_of_its_own_kind(app, tmp_path):
    server, _ = app
    s = replay(_scenario(tmp_path, 3), ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/",
        script=_files(tmp_path, welcome="bienvenue"), results=str(tmp_path / "r.csv"),
        fail_on=()))
    assert s["errors"]["by_kind"] == {"check_failed": 3}        # each session's login check
    rows = read_results(tmp_path / "r.csv")
    failed = rows[rows["error"] == "check_failed"]
    assert failed["url"].tolist() == ["/home"] * 3 and (failed["status"] == 200).all()
    (tmp_path / "shop.py").write_text(SCRIPT.format(welcome="welcome").replace(
        'form_field("csrf_token")', 'form_field("token")'))
    s = replay(_scenario(tmp_path, 3), ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/", script=str(tmp_path / "shop.py"),
        fail_on=()))
    # no token: the GET /login fails extract_failed; the POST cannot fill {csrf}: script_error
    # (never sent), and the server refuses the carts without a login (403)
    assert s["errors"]["by_kind"] == {"extract_failed": 3, "script_error": 9}, s["errors"]


def test_a_form_is_sent_from_its_page_and_urls_take_the_sessions_own_values(app, tmp_path):
    """Sessions home → POST /login → POST /cart/{id} with no start page: the script says the
    login is sent from GET /login (fetched first, as a user opens the form) and that the cart's
    id is the session's own (its data row's), not the scenario's: the application logs every
    session in and records the data file's items. The cart is sent from /home, where the
    login's 303 left the session: no /home fetched again."""
    server, seen = app
    n = 4
    scenario = _scenario(tmp_path, n, (2, 1, 3), [(3 * i + 2, "/cart/999") for i in range(n)])
    (tmp_path / "users.csv").write_text("email,item\n" + "".join(f"u{k}@shop.test,{70 + k}\n"
                                                                 for k in range(n)))
    (tmp_path / "shop.py").write_text('''
from wagon.replay.script import Script, form_field, json_field
script = Script()
script.data("users", "users.csv")
script.on("GET /login", extract={"csrf": form_field("csrf_token")})
script.on("POST /login", after=["GET /login"], form={"email": "{users.email}",
          "password": "pw-{users.email}", "csrf_token": "{csrf}"})
script.on("POST /cart/{n}", after=["GET /home"], url={"n": "{users.item}"},
          form={"item": "{n}", "csrf_token": "{csrf}"}, check=json_field("ok", True))
''')
    s = replay(scenario, ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/", script=str(tmp_path / "shop.py"),
        results=str(tmp_path / "r.csv"), fail_on=()))
    assert s["errors"]["total"] == 0, s["errors"]
    assert sorted(seen.logins) == [f"u{k}@shop.test" for k in range(n)]
    assert sorted(seen.carts) == [(f"u{k}@shop.test", 70 + k) for k in range(n)]
    rows = read_results(tmp_path / "r.csv")
    assert rows.groupby("session")["url"].apply(list).tolist() == [
        ["/home", "/login", "/login", "/home", f"/cart/{70 + k}"] for k in range(n)]


@pytest.mark.parametrize("text, why", [
    ("import nothing_here", "the script fails to load: ModuleNotFoundError"),
    ("x = 1", "defines no 'script = Script(...)'"),
    ("from wagon.replay.script import Script\nscript = Script(start=['GET /logout'])",
     "'GET /logout' is not a page of the scenario's site"),
    ("from wagon.replay.script import Script\nscript = Script(start=['POST /cart/{id}'])",
     "a start page must have one URL"),
    ("from wagon.replay.script import Script\nscript = Script().on('GET /cart/{id}', "
     "url={'n': '1'})", "url names 'n', not a placeholder of the page")])
def test_a_script_that_cannot_play_is_one_line_before_the_run(tmp_path, text, why):
    (tmp_path / "bad.py").write_text(text)
    r = CliRunner().invoke(main, ["replay", _scenario(tmp_path, 1), "--target",
                                  "http://127.0.0.1:9/", "--script", str(tmp_path / "bad.py")])
    assert r.exit_code == 2 and why in r.output and len(r.output.strip().splitlines()) == 1, \
        r.output


def test_a_login_the_scenario_drew_failed_is_sent_wrong_and_tried_again_from_its_answer(
        app, tmp_path):
    """A scenario drawn from a model (``statuses_drawn``) whose sessions log in twice: the
    first login left unmarked (drawn answered with content, 200: the log's user typed a wrong
    password), the second marked 303. The script's password is a function of ``{status}``:
    the application sees a wrong password then the right one from each session, logs each in
    once, and the retry is sent from the failed login's answer (no GET /login between); the
    checks ``when(200, ...)`` and ``when(303, ...)`` each run on their own login (an
    application: the marks are not asked of it, ``status_marks=False``). The same sessions in
    a scenario that drew no statuses send the right password twice."""
    server, seen = app
    n, clicks = 3, (0, 1, 1, 3)                     # GET /login, POST /login twice, a cart
    header = {"seed": 1, "classes": [c.to_dict() for c in parse_classes("lan/http11")],
              "site": {"pages": [{"url": u, "size": 10, "objects": [], "method": m}
                                 for m, u in PAGES], "objects": []}}
    marks = np.array([[4 * i + 2, 0, 303] for i in range(n)])
    (tmp_path / "users.csv").write_text("email\n" + "".join(f"u{k}@shop.test\n"
                                                            for k in range(4)))
    (tmp_path / "shop.py").write_text('''
from wagon.replay.script import Script, contains, form_field, json_field, when
script = Script()
script.data("users", "users.csv")
script.on("GET /login", extract={"csrf": form_field("csrf_token")})
script.on("POST /login", after=["GET /login"], form={
    "email": "{users.email}", "csrf_token": "{csrf}",
    "password": lambda v: ("bad-" if v["status"] == "200" else "pw-") + v["users.email"]},
    check=[when(200, contains("wrong password")), when(303, contains("welcome"))])
script.on("POST /cart/{n}", form={"item": "{n}", "csrf_token": "{csrf}"},
          check=json_field("ok", True))
''')
    for drawn, expected in ((True, ["wrong password", "welcome"]), (False, ["welcome"] * 2)):
        out = io.StringIO()
        ScenarioWriter(out, header | ({"statuses_drawn": True} if drawn else {})).write(
            SessionBatch(np.arange(n), np.arange(n) * 0.02, np.zeros(n, int),
                         np.arange(n + 1) * 4, np.tile(clicks, n),
                         np.tile([0.0, 0.01, 0.01, 0.01], n), statuses=marks,
                         urls=[(4 * i + 3, f"/cart/{5 + i}") for i in range(n)]))
        (tmp_path / "s.jsonl").write_text(out.getvalue())
        _App.logins = []
        s = replay(str(tmp_path / "s.jsonl"), ReplayOptions(
            target=f"http://127.0.0.1:{server.server_port}/", script=str(tmp_path / "shop.py"),
            results=str(tmp_path / "r.csv"), fail_on=(), status_marks=False))
        assert s["errors"]["total"] == 0, read_results(tmp_path / "r.csv")[
            ["session", "method", "url", "status", "error"]].to_string()
        assert sorted(seen.logins) == sorted([f"u{i % 4}@shop.test" for i in range(n)] * (
            1 if drawn else 2))
        rows = read_results(tmp_path / "r.csv")
        assert rows.groupby("session")["url"].apply(list).tolist() == [
            # not drawn: the second login, after the first's 303 to /home, opens the form
            ["/login", "/login", "/home", "/login", "/login", "/home", f"/cart/{5 + i}"]
            if not drawn else ["/login", "/login", "/login", "/home", f"/cart/{5 + i}"]
            for i in range(n)], drawn


def test_a_value_function_that_raises_is_a_script_error_and_the_request_is_not_sent(
        app, tmp_path):
    server, seen = app
    (tmp_path / "users.csv").write_text("email\nu0@shop.test\n")
    (tmp_path / "shop.py").write_text('''
from wagon.replay.script import Script, form_field
script = Script(start=["GET /login", "POST /login"])
script.data("users", "users.csv")
script.on("GET /login", extract={"csrf": form_field("csrf_token")})
script.on("POST /login", form={"email": "{users.email}", "password": lambda v: v["nope"],
                               "csrf_token": "{csrf}"})
''')
    s = replay(_scenario(tmp_path, 2), ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/", script=str(tmp_path / "shop.py"),
        results=str(tmp_path / "r.csv"), fail_on=()))
    assert s["errors"]["by_kind"].get("script_error") == 2 and not seen.logins
    rows = read_results(tmp_path / "r.csv")
    assert (rows[rows["error"] == "script_error"]["status"] == 0).all()     # never sent
