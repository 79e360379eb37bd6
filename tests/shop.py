"""The shop (tests/apps/shop) served as in production: gunicorn (2 workers) behind Debian's nginx.

nginx serves the static objects from a folder and proxies everything else to gunicorn; its
access log is the Combined layout (``$request``: method, path and query string, protocol)."""
from __future__ import annotations

import contextlib
import secrets
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from wagon.experiment.servers import free_port, listening

from .apps.shop import store
from .apps.shop.app import PICTURES
from .servers import nginx

APPS = Path(__file__).parent / "apps"
#: nginx's predefined ``combined`` layout, spelt out (the predefined name cannot be redefined)
COMBINED = ('$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
            '"$http_referer" "$http_user_agent"')
PROXY = """location /static/ {{ expires 1h; }}
    location / {{ proxy_pass http://127.0.0.1:{port}; proxy_set_header Host $http_host;
                 proxy_set_header X-Forwarded-For $remote_addr; }}"""


@dataclass(frozen=True)
class Shop:
    url: str             # nginx's, e.g. http://127.0.0.1:PORT/
    access_log: Path     # nginx's, Combined layout
    db: Path             # the SQLite file the app writes

    def counts(self) -> dict[str, int]:
        """Rows the app has written: {"carts": n, "orders": n, "logins": n}."""
        return store.counts(self.db)


def _www(root: Path) -> Path:
    """nginx's folder: the shop's style sheets and scripts, and its pictures (made here, seeded
    blocks of colour, by Pillow, matplotlib's dependency; item pictures of 40 to 155 px a side
    so that objects differ in size)."""
    static = root / "static"
    shutil.copytree(APPS / "shop" / "static", static, dirs_exist_ok=True)
    (static / "img").mkdir(exist_ok=True)
    rng = np.random.default_rng(37)

    def save(name: str, width: int, height: int) -> None:
        blocks = rng.integers(0, 16, (height // 4, width // 4, 3), dtype=np.uint8) * 16
        pixels = blocks.repeat(4, axis=0).repeat(4, axis=1)
        Image.fromarray(pixels).save(static / name)

    save("logo.png", 120, 40)
    save("img/banner.jpg", 960, 240)
    for k in range(PICTURES):
        save(f"img/item-{k}.png", 40 + 5 * k, 40 + 5 * k)
    for name in store.CATEGORIES:
        save(f"img/cat-{name}.png", 320, 40)
    return root


@contextlib.contextmanager
def shop(workdir: Path) -> Iterator[Shop]:
    """The shop on a fresh database in ``workdir``: gunicorn and nginx on free loopback ports,
    both stopped by their PIDs when the block ends."""
    workdir.mkdir(parents=True, exist_ok=True)
    db = store.create(workdir / "shop.db")
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "--workers", "2", "--bind", f"127.0.0.1:{port}",
            "--graceful-timeout", "5", "--no-control-socket", "--pythonpath", str(APPS), "--env", f"SHOP_DB={db}",
            "--env", f"SHOP_SECRET={secrets.token_hex(16)}", "shop.app:create_app()"]
    with listening(argv, port, log=workdir / "gunicorn.log", name="gunicorn"), \
            nginx(_www(workdir / "www"), workdir / "nginx", log_format=COMBINED,
                  locations=PROXY.format(port=port)) as ng:
        yield Shop(ng.url, ng.workdir / "access.log", db)
