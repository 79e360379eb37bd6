"""The URL space the fit learns (``url_space``) against counts made here with plain Python
collections over the log's own lines, and the one-time URLs synthesis makes of it counted over
the exported log."""
from __future__ import annotations

import collections
import json
import math
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.model import ModelError, validate

from .conftest import require_tool
from .servers import nginx


def _word(n: int) -> str:
    """``n`` in letters (numbers in paths are templated by the fit)."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out += chr(97 + r)
        if not n:
            return out


def _log(path, seed: int = 3, numbered: bool = False) -> list[str]:
    """Clients clicking Zipf-popular pages 30 s apart, each page's two Zipf-popular images
    fetched in its second: a log with one-timers among pages and among objects; ``numbered``:
    each page's path ends in a year (``/p/bd/1993.html``), which the fit templates
    (``/p/bd/{id}.html``), so its one-time pages are one-time templates."""
    rng = np.random.default_rng(seed)
    lines, t0 = [], 0
    for client in range(300):
        t = t0 + int(rng.integers(0, 20000))
        for _ in range(int(rng.integers(1, 6))):
            page = int(rng.zipf(1.6)) % 5000
            leaf = f"/{1990 + page % 7}" if numbered else ""
            lines.append((t, client, f"/p/{_word(page)}{leaf}.html", 1000 + 7 * page))
            for _ in range(2):
                obj = int(rng.zipf(1.8)) % 3000
                lines.append((t, client, f"/i/{_word(obj)}.gif", 200 + 3 * obj))
            t += 30
    lines.sort()
    text = [f"10.0.{c // 256}.{c % 256} - - [01/Aug/1995:{t // 3600:02d}:{t // 60 % 60:02d}:"
            f"{t % 60:02d} -0400] \"GET {u} HTTP/1.0\" 200 {s}" for t, c, u, s in lines]
    path.write_text("\n".join(text) + "\n")
    return text


def _fit(tmp: Path, numbered: bool = False) -> tuple[list[str], Path, dict]:
    """The test log's lines, its model and what ``wagon fit --json`` said."""
    log, model = tmp / "a.log", tmp / "m.json"
    lines = _log(log, numbered=numbered)
    r = CliRunner().invoke(main, ["fit", str(log), "-o", str(model), "--workers", "1",
                                  "--json"])
    assert r.exit_code == 0, r.output
    return lines, model, json.loads(r.output)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[list[str], Path, dict]:
    return _fit(tmp_path_factory.mktemp("urlspace"))


@pytest.fixture(scope="module")
def numbered(tmp_path_factory) -> tuple[list[str], Path, dict]:
    return _fit(tmp_path_factory.mktemp("numbered"), numbered=True)


def test_the_fit_counts_the_logs_one_timers_and_new_pages(fitted):
    """Pages and objects, their references and one-timers as Counter sees them in the lines;
    the growth law within its own reported gap of the distinct pages Counter finds."""
    lines, model, out = fitted
    said = out["url_space"]
    assert said == json.loads(model.read_text())["url_space"]     # --json and the file agree
    urls = [line.split('"GET ')[1].split()[0] for line in lines]
    for kind, ext in (("pages", ".html"), ("objects", ".gif")):
        c = collections.Counter(u for u in urls if u.endswith(ext))
        k = said[kind]
        assert (k["urls"], k["references"], k["once"]) == (
            len(c), sum(c.values()), sum(1 for v in c.values() if v == 1))
    pages = [u for u in urls if u.endswith(".html")]
    g = said["growth"]
    law = g["K"] * len(pages) ** g["beta"]
    assert abs(law / len(set(pages)) - 1) <= g["max_relative_error"] + 1e-9
    assert 0.9 < g["r2"] <= 1
    # sizes grow with the URL's number and popularity falls with it: ρ < 0
    assert said["pages"]["size_rank"]["ci"][1] < 0


def test_a_url_space_with_more_one_timers_than_urls_is_refused():
    doc = {"format": "wagon-model", "version": 6, "variables": {},
           "url_space": {"pages": {"urls": 3, "references": 9, "once": 4},
                         "objects": {"urls": 0, "references": 0, "once": 0}}}
    with pytest.raises(ModelError, match="url_space.pages"):
        validate(doc)
    doc["url_space"]["pages"]["once"] = 2
    validate(doc)
    del doc["url_space"]
    validate({**doc, "version": 5})          # older models, without it, read as before


def _pages(lines: list[str]) -> collections.Counter:
    return collections.Counter(u for u in (line.split('"GET ')[1].split()[0] for line in lines)
                               if u.endswith(".html"))


@pytest.mark.parametrize("log", ["fitted", "numbered"])
def test_synthesis_keeps_the_logs_share_of_one_time_pages(log, request, tmp_path):
    """The share of pages clicked once and the distinct pages per click in the exported log,
    counted here with Counter over its lines and the log's, agree within three binomial
    standard errors of the log's; a one-timer's family URL (/wagon-once/c/...) is clicked once,
    or twice when a click was moved onto it (synth.once); so too when the one-time pages are
    templates (``numbered``: before, a one-time template had no copies)."""
    lines, model = request.getfixturevalue(log)[:2]
    sc, out = tmp_path / "s.jsonl", tmp_path / "s.log"
    run = CliRunner().invoke
    r = run(main, ["synth", str(model), "--sessions", "300", "--seed", "2", "-o", str(sc)])
    assert r.exit_code == 0, r.output
    assert run(main, ["export", str(sc), "--to", "clf", "-o", str(out)]).exit_code == 0
    log, syn = _pages(lines), _pages(out.read_text().splitlines())
    family = [u for u in syn if u.startswith("/wagon-once/")]
    assert family and all(syn[u] <= 2 for u in family)
    # one-timers among pages (n: pages), first clicks of a page among clicks (n: clicks);
    # without synth.once and the flow balance: 0.30–0.43 against 0.65, 0.081–0.090 against 0.115
    for share, n in ((lambda c: sum(v == 1 for v in c.values()) / len(c), len(log)),
                     (lambda c: len(c) / sum(c.values()), sum(log.values()))):
        p = share(log)
        assert abs(share(syn) - p) < 3 * math.sqrt(p * (1 - p) / n)


def test_nginx_answers_every_one_time_url_of_the_built_site(fitted, tmp_path):
    """``wagon site build --scenario`` writes every /wagon-once/ page and object the scenario's
    site lists, and nginx's own access log shows each answered 200."""
    require_tool("nginx")
    sc, site = tmp_path / "s.jsonl", tmp_path / "site"
    run = CliRunner().invoke
    assert run(main, ["synth", str(fitted[1]), "--sessions", "50", "-o", str(sc)]).exit_code == 0
    assert run(main, ["site", "build", str(site), "--scenario", str(sc)]).exit_code == 0
    spec = json.loads(sc.read_text().split("\n", 1)[0])["site"]
    once = [u["url"] for u in spec["pages"] + spec["objects"]
            if u["url"].startswith("/wagon-once/")]
    assert once
    with nginx(site, tmp_path / "ng") as server:
        for url in once:
            with urllib.request.urlopen(server.url.rstrip("/") + url) as r:
                r.read()
        log = server.access(expect=len(once))
    assert collections.Counter((a.uri, a.status) for a in log) == collections.Counter(
        {(u, 200): 1 for u in once})
