"""The shop: a small dynamic web application written for the tests (Flask + SQLite).

Run by gunicorn behind nginx (``tests.apps.shop.shop``): ``gunicorn 'app:create_app()'`` with
``SHOP_DB`` (the database file, ``store.create``) and ``SHOP_SECRET`` (the key signing the
session cookie, shared by the workers) in its environment. The session is Flask's signed
cookie; it holds the user, the cart's key and the CSRF token every form carries. Pages and
their answers are listed in docs/application.md; the static objects they reference are nginx's.
"""
from __future__ import annotations

import hmac
import os
import re
import secrets
import sqlite3
import time
from urllib.parse import urlsplit

from flask import Flask, abort, current_app, g, jsonify, redirect, render_template, request, session
from werkzeug.security import check_password_hash

from .store import CATEGORIES, ITEMS

PER_PAGE = 10
#: how many item pictures nginx holds (/static/img/item-K.png, K = id % PICTURES)
PICTURES = 24
SID = re.compile(r"[0-9a-f]{32}")


def create_app(db: str | None = None, secret: str | None = None) -> Flask:
    """The application on database ``db`` (else $SHOP_DB), cookies signed with ``secret``
    (else $SHOP_SECRET)."""
    app = Flask(__name__)
    app.config.update(DATABASE=db or os.environ["SHOP_DB"],
                      SECRET_KEY=secret or os.environ["SHOP_SECRET"],
                      SESSION_COOKIE_SAMESITE="Lax")
    app.teardown_appcontext(_close)
    app.jinja_env.globals.update(csrf=csrf_token, picture=picture, categories=CATEGORIES)
    for rule, view, methods in ROUTES:
        app.add_url_rule(rule, view.__name__, view, methods=methods)
    return app


def _db() -> sqlite3.Connection:
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"], timeout=30)
        g.db.row_factory = sqlite3.Row
    return g.db


def _close(_error: BaseException | None) -> None:
    db = g.pop("db", None)
    if db is not None:
        db.close()


def csrf_token() -> str:
    """This session's CSRF token (made on first use): forms carry it, POSTs must send it."""
    if "csrf" not in session:
        session["csrf"] = secrets.token_hex(16)
    return session["csrf"]


def _check_csrf() -> None:
    sent = request.form.get("csrf_token", "")
    if "csrf" not in session or not hmac.compare_digest(sent, session["csrf"]):
        abort(403, "missing or wrong CSRF token")


def picture(item_id: int, width: int | None = None) -> str:
    """Item ``item_id``'s picture; ``width``: as a thumbnail (``?w=``, the image server's
    resizing parameter; nginx serves the one file for both)."""
    return f"/static/img/item-{item_id % PICTURES}.png" + (f"?w={width}" if width else "")


def _int_arg(name: str, default: int, low: int, high: int) -> int:
    """Query argument ``name`` as an int in [low, high]: 400 otherwise."""
    value = request.args.get(name, str(default))
    if not value.isdigit() or not low <= int(value) <= high:
        abort(400, f"{name} must be an integer in [{low}, {high}]")
    return int(value)


def _user() -> int | None:
    return session.get("user")


def home():
    featured = _db().execute("SELECT * FROM items WHERE id % 97 = 1 LIMIT 3").fetchall()
    return render_template("home.html", items=featured)


def search():
    q = request.args.get("q", "").strip()
    page = _int_arg("page", 1, 1, 100)
    rows = _db().execute("SELECT * FROM items WHERE name LIKE ? ORDER BY id LIMIT ? OFFSET ?",
                         (f"%{q}%", PER_PAGE, (page - 1) * PER_PAGE)).fetchall() if q else []
    return render_template("search.html", q=q, page=page, items=rows)


def item(item_id: int | None = None):
    if item_id is None:
        item_id = _int_arg("id", 0, 1, 10 ** 9)
    row = _db().execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        abort(404)
    related = [1 + (item_id + k * 31) % ITEMS for k in (1, 2, 3)]
    return render_template("item.html", item=row, related=related)


def category(name: str):
    if name not in CATEGORIES:
        abort(404)
    page = _int_arg("page", 1, 1, 100)
    rows = _db().execute("SELECT * FROM items WHERE category = ? ORDER BY id LIMIT ? OFFSET ?",
                         (name, PER_PAGE, (page - 1) * PER_PAGE)).fetchall()
    return render_template("category.html", name=name, page=page, items=rows)


def _next_path() -> str:
    """Where to go after logging in: ?next= when it is a path of this site, else home."""
    target = request.args.get("next", "/")
    parts = urlsplit(target)
    return target if target.startswith("/") and not parts.netloc else "/"


def login():
    if request.method == "GET":
        return render_template("login.html", error=None)
    _check_csrf()
    row = _db().execute("SELECT id, hash FROM users WHERE email = ?",
                        (request.form.get("email", ""),)).fetchone()
    if row is None or not check_password_hash(row["hash"], request.form.get("password", "")):
        return render_template("login.html", error="Wrong e-mail address or password.")
    with _db() as db:
        db.execute("INSERT INTO logins (user_id, at) VALUES (?, ?)", (row["id"], time.time()))
    session["user"], session["email"] = row["id"], request.form["email"]
    session["csrf"] = secrets.token_hex(16)             # a new token once logged in
    return redirect(_next_path(), 303)


def logout():
    session.pop("user", None)
    session.pop("email", None)
    return redirect("/", 303)


def _cart_key() -> str:
    if "cart" not in session:
        session["cart"] = secrets.token_hex(8)
    return session["cart"]


def _cart_rows() -> list[sqlite3.Row]:
    return _db().execute(
        "SELECT carts.id, item_id, qty, name, price_cents FROM carts JOIN items "
        "ON items.id = item_id WHERE cart = ? AND order_id IS NULL ORDER BY carts.id",
        (_cart_key(),)).fetchall()


def cart():
    if request.method == "POST":
        _check_csrf()
        item_id, qty = request.form.get("item", ""), request.form.get("qty", "1")
        if not (item_id.isdigit() and 1 <= int(item_id) <= ITEMS
                and qty.isdigit() and 1 <= int(qty) <= 10):
            abort(400, "item must be an item's id and qty an integer in [1, 10]")
        with _db() as db:
            db.execute("INSERT INTO carts (cart, user_id, item_id, qty, added) "
                       "VALUES (?, ?, ?, ?, ?)",
                       (_cart_key(), _user(), int(item_id), int(qty), time.time()))
        return redirect("/cart", 303)
    return render_template("cart.html", rows=_cart_rows())


def checkout():
    _check_csrf()
    if _user() is None:
        return redirect("/login?next=/cart", 303)
    rows = _cart_rows()
    if not rows:
        return redirect("/cart", 303)
    total = sum(r["qty"] * r["price_cents"] for r in rows)
    with _db() as db:
        order = db.execute("INSERT INTO orders (user_id, lines, total_cents, placed) "
                           "VALUES (?, ?, ?, ?)",
                           (_user(), len(rows), total, time.time())).lastrowid
        db.executemany("UPDATE carts SET order_id = ? WHERE id = ?",
                       [(order, r["id"]) for r in rows])
    return redirect(f"/orders/{order}", 303)


def order(order_id: int):
    row = _db().execute("SELECT * FROM orders WHERE id = ? AND user_id = ?",
                        (order_id, _user())).fetchone()
    if row is None:
        abort(404)
    return render_template("order.html", order=row)


def account():
    row = _db().execute("SELECT email FROM users WHERE id = ?", (_user(),)).fetchone()
    if row is None or row["email"] != request.args.get("email"):
        return redirect("/login?next=/", 303)
    orders = _db().execute("SELECT * FROM orders WHERE user_id = ? ORDER BY id",
                           (_user(),)).fetchall()
    return render_template("account.html", email=row["email"], orders=orders)


def track():
    """An analytics beacon (GET pixel or POST sendBeacon): 204, or 400 without a 32-hex sid."""
    if not SID.fullmatch(request.args.get("sid", "")):
        abort(400, "sid must be 32 hexadecimal digits")
    return "", 204


def api_items():
    ids = request.args.get("ids", "").split(",")
    if not all(i.isdigit() and len(i) <= 9 for i in ids) or len(ids) > 50:
        return jsonify(error="ids must be up to 50 comma-separated item ids"), 400
    rows = _db().execute(f"SELECT * FROM items WHERE id IN ({','.join('?' * len(ids))})",
                         [int(i) for i in ids]).fetchall()
    return jsonify(items=[dict(r) for r in rows])


ROUTES = [("/", home, ["GET"]), ("/search", search, ["GET"]),
          ("/item/<int(max=999999999):item_id>", item, ["GET"]), ("/item", item, ["GET"]),
          ("/category/<name>", category, ["GET"]), ("/login", login, ["GET", "POST"]),
          ("/logout", logout, ["GET"]), ("/cart", cart, ["GET", "POST"]),
          ("/checkout", checkout, ["POST"]), ("/orders/<int(max=999999999):order_id>", order, ["GET"]),
          ("/account", account, ["GET"]), ("/track", track, ["GET", "POST"]),
          ("/api/items", api_items, ["GET"])]
