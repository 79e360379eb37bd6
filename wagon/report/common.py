"""The pieces every HTML report with plots is made of: PNG figures embedded as data (or written
as files), the Hurst table, and (from ``htmlpage``) tables, the line that says how to read a
plot, and the page around them."""
from __future__ import annotations

import base64
import io
import os

from matplotlib.figure import Figure

from ..formats.atomic import atomic_path
from .htmlpage import howto, page, table

__all__ = ["img", "png", "fig", "table", "howto", "hurst_table", "page"]


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


def hurst_table(estimates) -> str:
    return "<h3>Hurst parameter (requests per second)</h3>" + table(
        ["estimator", "H", "95% CI", "fit range"],
        [[e.estimator, e.H, f"[{e.ci[0]:.3f}, {e.ci[1]:.3f}]" if e.ci else "", e.fit_range]
         for e in estimates])
