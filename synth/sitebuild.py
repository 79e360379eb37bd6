"""The modeled site as bytes: HTML pages of their modeled size that reference their objects and
link to the pages users went to next, objects of their size. ``build_site`` writes it to a
directory any web server can serve; ``wagon serve`` serves the same bytes from memory.
"""
from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from .site import Site

__all__ = ["page_html", "object_bytes", "url_path", "build_site", "BuildReport"]

MAX_LINKS = 50
_FILL = np.random.default_rng(20011).integers(0, 256, 1 << 16, dtype=np.uint8).tobytes()


def page_html(site: Site, page: int) -> bytes:
    """The HTML of ``page``: exactly its modeled size, unless its references need more."""
    url = site.page_urls[page]
    head = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(url)}"
            f"</title></head>\n<body>\n<h1>{html.escape(url)}</h1>\n")
    imgs = "".join(f'<img src="{html.escape(site.object_urls[o])}" alt="">\n'
                   for o in site.page_objects[page])
    a, b = site.route_ptr[page], site.route_ptr[page + 1]
    links = "".join(f'<a href="{html.escape(site.page_urls[t])}">next</a>\n'
                    for t in site.route_to[a:b][:MAX_LINKS].tolist())
    tail = "</body></html>\n"
    text = (head + imgs + links).encode()
    room = int(site.page_sizes[page]) - len(text) - len(tail) - len("<!--  -->\n")
    pad = b"<!-- " + (b"x" * max(room, 0)) + b" -->\n" if room >= 0 else b""
    return text + pad + tail.encode()


def object_bytes(size: int) -> bytes:
    """``size`` bytes of incompressible filler (compression would change what is transferred)."""
    reps, rest = divmod(int(size), len(_FILL))
    return _FILL * reps + _FILL[:rest]


def url_path(url: str) -> str | None:
    """Relative file path for a URL path, or None when it cannot be one (.., NUL, empty parts)."""
    if not url.startswith("/"):
        return None
    path = unquote(url)
    if "\0" in path or "\\" in path:
        return None
    parts = path.split("/")[1:]
    if parts and parts[-1] == "":
        parts[-1] = "index.html"
    if any(p in ("", ".", "..") for p in parts):
        return None
    return "/".join(parts)


@dataclass
class BuildReport:
    pages: int = 0
    objects: int = 0
    bytes: int = 0
    grown: int = 0                         # pages whose references exceed their modeled size
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


def build_site(site: Site, outdir: str | os.PathLike) -> BuildReport:
    """Write every page and object under ``outdir``; unmappable URLs are counted, not fatal."""
    outdir = Path(outdir)
    report = BuildReport()
    entries = [(url_path(u), True, i) for i, u in enumerate(site.page_urls)] + \
              [(url_path(u), False, i) for i, u in enumerate(site.object_urls)]
    files = {p for p, _, _ in entries if p}
    dirs = {"/".join(p.split("/")[:k]) for p in files for k in range(1, p.count("/") + 1)}
    seen: set[str] = set()
    for path, is_page, i in entries:
        if path is None:
            report.skip("URL cannot be a file path")
            continue
        if path in dirs or path in seen:
            report.skip("path is also a directory" if path in dirs else "duplicate path")
            continue
        seen.add(path)
        data = page_html(site, i) if is_page else object_bytes(int(site.object_sizes[i]))
        if is_page:
            report.pages += 1
            report.grown += len(data) > int(site.page_sizes[i])
        else:
            report.objects += 1
        target = outdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        report.bytes += len(data)
    return report
