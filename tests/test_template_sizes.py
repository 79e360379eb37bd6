"""A template page's concrete URLs (an attachment, a message) have sizes of their own: the model
keeps their percentiles, and synthesis gives each concrete URL one size drawn from them."""
from __future__ import annotations

import collections
import json
import re
from datetime import datetime

import numpy as np
from scipy import stats

from .loop import scenario_header, synth_export, wagon_ok

_CLF = re.compile(r'^\S+ - - \[[^]]+\] "GET (\S+) HTTP/1\.0" 200 (\d+)$')


def test_a_templates_sizes_are_its_urls_and_each_url_keeps_one(tmp_path):
    """400 clicks on ``/file?id=N`` (300 ids, each a lognormal size of its own, σ 1.2): the
    model's page keeps the percentiles of the logged sizes (the inverted CDF, the k-th
    percentile the ⌈k·n/100⌉-th smallest, in integers here: NumPy's float k/100·n puts 14 %
    of 400 at the 57th), not one size; its export gives every concrete URL one size, and the
    sizes of its distinct URLs follow those of the log's (two-sample KS p > 0.01; one size for
    all, the upper median, p ~ 0)."""
    rng = np.random.default_rng(3)
    sizes = rng.lognormal(10, 1.2, 300).astype(int)
    t0 = datetime(2015, 5, 17).timestamp()
    logged, logged_ids = [], []
    lines = []
    for h in range(400):
        i = int(rng.integers(0, 300))
        when = datetime.utcfromtimestamp(t0 + 900 * h).strftime("%d/%b/%Y:%H:%M:%S +0000")
        lines.append(f'10.0.{h // 250}.{h % 250} - - [{when}] "GET /file?id={i} HTTP/1.1" 200 '
                     f'{sizes[i]} "-" "Mozilla/5.0"')
        logged.append(sizes[i])
        logged_ids.append(i)
    (tmp_path / "in.log").write_text("\n".join(lines) + "\n")
    wagon_ok("fit", str(tmp_path / "in.log"), "-o", str(tmp_path / "m.json"))
    page, = json.loads((tmp_path / "m.json").read_text())["site"]["pages"]
    assert page["url"] == "/file?id={id}"
    ranked, n = sorted(logged), len(logged)
    assert page["sizes"] == [int(ranked[max(0, -(-k * n // 100) - 1)]) for k in range(101)]
    exported = synth_export(tmp_path, 400, 1).read_text().splitlines()
    rows = [_CLF.match(x).groups() for x in exported]
    per_url = collections.defaultdict(set)
    for url, size in rows:
        per_url[url].add(int(size))
    assert len(per_url) > 100 and all(len(s) == 1 for s in per_url.values())
    distinct = [s for one in per_url.values() for s in one]          # a URL once, as logged:
    assert stats.ks_2samp(distinct, sizes[sorted(set(logged_ids))]).pvalue > 0.01


def test_a_site_build_writes_the_concrete_urls_a_scenario_asks_for(tmp_path):
    """A scenario whose clicks ask for ``/d/1.html``, ``/d/2.html`` (a path template with
    sizes) and ``/q?id=5``, ``/q?id=6`` (a query template): site build writes a file at each
    concrete path, of the size the documented rule gives it (the percentile CRC-32 · 101 / 2³²
    picks, computed here with zlib), and one file for the query template's path, which a
    static server serves whatever the query."""
    import zlib
    sizes = list(range(2000, 2000 + 101 * 300, 300))
    header = scenario_header(6, {
        "pages": [{"url": "/d/{n}.html", "size": 900, "objects": [], "sizes": sizes},
                  {"url": "/q?id={id}", "size": 700, "objects": []}], "objects": []})
    session = {"id": 0, "start": 0.0, "class": 0,
               "clicks": [[0, 0.0], [0, 1.0], [1, 1.0], [1, 1.0]],
               "urls": [[0, "/d/1.html"], [1, "/d/2.html"], [2, "/q?id=5"], [3, "/q?id=6"]]}
    (tmp_path / "s.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(session) + "\n")
    wagon_ok("site", "build", str(tmp_path / "site"), "--scenario", str(tmp_path / "s.jsonl"))
    for url in ("/d/1.html", "/d/2.html"):
        size = sizes[zlib.crc32(url.encode()) * 101 >> 32]
        assert (tmp_path / "site" / url[1:]).stat().st_size == size
    assert (tmp_path / "site" / "q").stat().st_size == 700
