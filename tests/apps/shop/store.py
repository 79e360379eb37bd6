"""The shop's SQLite database: its schema and the catalogue and users every fresh copy holds.

Users ``user1@example.test`` … ``user200@example.test`` have the password ``secret<k>``
(``password(k)``); items 1..500 belong to ``CATEGORIES`` in turn. The app writes three tables
that tests observe: ``carts`` (a row per "add to cart"), ``orders`` (a row per checkout) and
``logins`` (a row per successful login)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from werkzeug.security import generate_password_hash

USERS = 200
ITEMS = 500
CATEGORIES = ("books", "music", "garden", "kitchen", "toys", "sports", "tools", "games")
#: the words item names are made of (the search vocabulary)
WORDS = ("red", "blue", "green", "small", "large", "classic", "modern", "wooden", "steel",
         "travel", "pocket", "deluxe", "mini", "family", "pro", "vintage")
#: cheap hashes: 200 users hashed at every start (werkzeug's default scrypt takes ~50 ms each)
HASH = "pbkdf2:sha256:1000"

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL, hash TEXT NOT NULL);
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
                    price_cents INTEGER NOT NULL);
CREATE INDEX items_category ON items (category);
CREATE TABLE carts (id INTEGER PRIMARY KEY, cart TEXT NOT NULL, user_id INTEGER,
                    item_id INTEGER NOT NULL REFERENCES items, qty INTEGER NOT NULL,
                    order_id INTEGER REFERENCES orders, added REAL NOT NULL);
CREATE INDEX carts_cart ON carts (cart);
CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users,
                     lines INTEGER NOT NULL, total_cents INTEGER NOT NULL, placed REAL NOT NULL);
CREATE TABLE logins (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users,
                     at REAL NOT NULL);
"""


def email(k: int) -> str:
    return f"user{k}@example.test"


def password(k: int) -> str:
    return f"secret{k}"


def item_name(i: int) -> str:
    """Item ``i``'s name: two words of ``WORDS`` and its category, e.g. "red pocket books 17"."""
    return (f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]} "
            f"{CATEGORIES[i % len(CATEGORIES)]} {i}")


def create(path: Path) -> Path:
    """A fresh database at ``path`` (replacing any): the schema, users and items; WAL journal so
    that the server's two workers read while one writes."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(SCHEMA)
        db.executemany("INSERT INTO users VALUES (?, ?, ?)",
                       [(k, email(k), generate_password_hash(password(k), HASH))
                        for k in range(1, USERS + 1)])
        db.executemany("INSERT INTO items VALUES (?, ?, ?, ?)",
                       [(i, item_name(i), CATEGORIES[i % len(CATEGORIES)], 199 + i * 37 % 9800)
                        for i in range(1, ITEMS + 1)])
    return path


def counts(path: Path) -> dict[str, int]:
    """Rows of the tables the app writes: {"carts": n, "orders": n, "logins": n}."""
    with sqlite3.connect(path) as db:
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("carts", "orders", "logins")}
