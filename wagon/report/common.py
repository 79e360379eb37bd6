"""The pieces every HTML report is made of: PNG figures embedded as data (or written as
files), tables, the line that says how to read a plot, and the page around them.

The page checks itself when loaded: a script marks ``<body data-images="ok N">`` once every image
has decoded (``broken K`` otherwise) and ``data-errors`` with any script error, so a headless
browser can tell that it renders."""
from __future__ import annotations

import base64
import html
import io
import os
from datetime import datetime, timezone

import numpy as np
from matplotlib.figure import Figure

from .. import __version__
from ..formats.atomic import atomic_path

__all__ = ["img", "png", "fig", "table", "howto", "hurst_table", "page"]

_CHECK = """<script>
window.addEventListener('error', e => { document.body.dataset.errors =
  (document.body.dataset.errors || '') + e.message + ';'; });
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const bad = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  document.body.dataset.images = bad ? 'broken ' + bad : 'ok ' + imgs.length;
});
</script>"""

_STYLE = """<style>
body { font-family: sans-serif; margin: 2em; max-width: 1100px; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; } .note { color: #555; } .howto { color: #333; font-style: italic; }
</style>"""


def save_png(figure: Figure, path: str | os.PathLike, dpi: int) -> None:
    """The figure as a PNG file at ``path``, written whole or not at all."""
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=dpi, format="png")


def img(data: bytes, alt: str = "plot") -> str:
    """An ``<img>`` holding the PNG ``data``."""
    return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'


def png(figure: Figure) -> str:
    """The figure as an ``<img>`` holding its PNG."""
    figure.tight_layout()
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=90)
    return img(buf.getvalue())


def fig(ncols: int = 2, width: float = 11, height: float = 3.6):
    """A figure and its row of ``ncols`` axes (``ax[0, k]``)."""
    figure = Figure(figsize=(width, height))
    return figure, figure.subplots(1, ncols, squeeze=False)


def table(head: list[str], rows: list[list], ident: str | None = None) -> str:
    """An HTML table; floats with 4 significant digits, NaN as an empty cell."""
    def cell(v):
        if isinstance(v, float):
            return "" if not np.isfinite(v) else f"{v:.4g}"
        return html.escape("" if v is None else str(v))
    attr = f" id='{ident}'" if ident else ""
    return (f"<table{attr}><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in rows)
            + "</table>")


def howto(text: str) -> str:
    """The one line under a plot or table that says how to read it."""
    return f"<p class='howto'>How to read: {html.escape(text)}</p>"


def hurst_table(estimates) -> str:
    return "<h3>Hurst parameter (requests per second)</h3>" + table(
        ["estimator", "H", "95% CI", "fit range"],
        [[e.estimator, e.H, f"[{e.ci[0]:.3f}, {e.ci[1]:.3f}]" if e.ci else "", e.fit_range]
         for e in estimates])


def page(title: str, body: list[str]) -> str:
    """The whole self-contained HTML page."""
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title>{_STYLE}</head><body><h1>{html.escape(title)}</h1>"
            f"<p class='note'>wagon-workload {__version__}, {stamp}</p>" + "".join(body)
            + _CHECK + "</body></html>")
