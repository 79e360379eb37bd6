"""The shop (a real application: Flask, SQLite, gunicorn behind nginx) loaded by a replay with
its script (tests/apps/shop/wagon_script.py): every session logs in with its CSRF token, adds
an item to its cart and checks out. The observers are the application's own database (logins,
carts, orders) and nginx's access log (methods and URLs)."""
from __future__ import annotations

import collections
import io
from pathlib import Path

import numpy as np

from wagon import read_results
from wagon.formats.classes import parse_classes
from wagon.formats.scenario import ScenarioWriter, SessionBatch
from wagon.replay import ReplayOptions, replay

from .shop import shop

SCRIPT = Path(__file__).parent / "apps" / "shop" / "wagon_script.py"
PAGES = [("GET", "/login"), ("POST", "/login"), ("GET", "/item/{id}"), ("POST", "/cart"),
         ("GET", "/cart"), ("POST", "/checkout")]


def _scenario(path: Path, n: int) -> Path:
    """n sessions, each: log in, an item page (item 7 + 3i), add it, the cart, check out."""
    header = {"seed": 1, "classes": [c.to_dict() for c in parse_classes("lan/http11")],
              "site": {"pages": [{"url": u, "size": 100, "objects": [], "method": m}
                                 for m, u in PAGES], "objects": []}}
    out = io.StringIO()
    ScenarioWriter(out, header).write(SessionBatch(
        np.arange(n), np.arange(n) * 0.05, np.zeros(n, int), np.arange(n + 1) * 6,
        np.tile(np.arange(6), n), np.tile([0.0] + [0.02] * 5, n),
        urls=[(6 * i + 2, f"/item/{7 + 3 * i}") for i in range(n)]))
    path.write_text(out.getvalue())
    return path


def test_each_scripted_session_logs_in_fills_its_cart_and_orders(tmp_path):
    n = 12
    with shop(tmp_path / "shop") as app:
        before = app.counts()
        s = replay(str(_scenario(tmp_path / "s.jsonl", n)), ReplayOptions(
            target=app.url, script=str(SCRIPT), results=str(tmp_path / "r.csv"), fail_on=()))
        after = app.counts()
        log = app.access_log.read_text().splitlines()
    assert s["errors"]["total"] == 0, s["errors"]
    assert {k: after[k] - before[k] for k in after} == {"logins": n, "carts": n, "orders": n}
    asked = collections.Counter(line.split('"')[1].split(" ")[0] for line in log)
    # each session: 3 POSTs; GETs: /login, / after the login, the item, /cart twice (after
    # the add and the page), the order page after the checkout
    assert asked == {"POST": 3 * n, "GET": 6 * n}
    rows = read_results(tmp_path / "r.csv")
    assert len(rows) == len(log) == 9 * n and (rows["status"] < 400).all()
    assert collections.Counter(rows["method"]) == asked        # the results say what was sent
