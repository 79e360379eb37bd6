"""The page every HTML report is: its style, tables (sortable by a click on a header), the
line that says how to read a plot or table, and the script that checks the page renders.
Nothing here imports matplotlib, so a report of tables alone (``wagon report LOG``) starts
fast.

The page checks itself when loaded: a script marks ``<body data-images="ok N">`` once every image
has decoded (``broken K`` otherwise) and ``data-errors`` with any script error, so a headless
browser can tell that it renders."""
from __future__ import annotations

import html
from datetime import datetime, timezone

import numpy as np

from .. import __version__

__all__ = ["table", "sortable", "howto", "page"]

_CHECK = """<script>
window.addEventListener('error', e => { document.body.dataset.errors =
  (document.body.dataset.errors || '') + e.message + ';'; });
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const bad = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  document.body.dataset.images = bad ? 'broken ' + bad : 'ok ' + imgs.length;
});
</script>"""

#: a click on a header of a ``sortable`` table sorts its rows by that column (numbers by their
#: ``data-v``, text by its letters), largest first, then smallest first on a second click
_SORT = """<script>
function sortRows(th) {
  const i = th.cellIndex, body = th.closest('table').tBodies[0];
  const down = th.dataset.order !== 'down';
  th.dataset.order = down ? 'down' : 'up';
  const key = r => r.cells[i].dataset.v;
  const rows = [...body.rows].sort((a, b) => {
    const x = key(a), y = key(b);
    const o = x !== undefined && y !== undefined ? x - y
      : a.cells[i].textContent.localeCompare(b.cells[i].textContent);
    return down ? -o : o; });
  rows.forEach(r => body.appendChild(r));
}
document.querySelectorAll('table.sortable th').forEach(th =>
  th.addEventListener('click', () => sortRows(th)));
</script>"""

_STYLE = """<style>
body { font-family: sans-serif; margin: 1em 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
table.sortable th { cursor: pointer; } table.sortable th::after { content: ' \\2195'; color: #999; }
td.text { text-align: left; max-width: 40em; overflow-wrap: anywhere; }
td[data-v], th { white-space: nowrap; }
.panels { display: grid; grid-template-columns: repeat(auto-fill, minmax(34em, 1fr));
          gap: 0 2em; align-items: start; }
.panels > section > table { width: 100%; } .panels > section.wide { grid-column: 1 / -1; }
img { max-width: 100%; } .note { color: #555; } .howto { color: #333; font-style: italic; }
</style>"""


def table(head: list[str], rows: list[list], ident: str | None = None) -> str:
    """An HTML table; floats with 4 significant digits (thousands separated), integers with
    thousands separators, NaN as an empty cell."""
    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "" if not np.isfinite(v) else f"{float(f'{v:.4g}'):,.10g}"
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            return f"{v:,}"
        return html.escape("" if v is None else str(v))
    attr = f" id='{ident}'" if ident else ""
    return (f"<table{attr}><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in rows)
            + "</table>")


def sortable(head: list[str], rows: list[list], ident: str) -> str:
    """A table whose rows a click on a header sorts. A cell is text, or ``(text, number)``:
    shown as the text (a readable unit), sorted by the number (kept in ``data-v``)."""
    def cell(v):
        if isinstance(v, tuple):
            return f"<td data-v='{v[1]!r}'>{html.escape(v[0])}</td>"
        return f"<td class='text'>{html.escape(str(v))}</td>"
    return (f"<table id='{ident}' class='sortable'><thead><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(map(cell, r)) + "</tr>" for r in rows)
            + "</tbody></table>")


def howto(text: str) -> str:
    """The one line under a plot or table that says how to read it."""
    return f"<p class='howto'>How to read: {html.escape(text)}</p>"


def page(title: str, body: list[str]) -> str:
    """The whole self-contained HTML page."""
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title>{_STYLE}</head><body><h1>{html.escape(title)}</h1>"
            f"<p class='note'>wagon-workload {__version__}, {stamp}</p>" + "".join(body)
            + _CHECK + _SORT + "</body></html>")
