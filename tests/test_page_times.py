"""The live view's per-page latency (``metrics.Tally.page_times``, ``histogram.Histograms``):
each page's percentiles are the nearest rank of its visits' times, as NumPy computes it;
``wagon_page_seconds`` read by Prometheus' own parser holds the most visited pages' visits;
merging two processes' states (one through msgpack, as a ``--cluster`` run's Dask queue sends
them) equals one Tally fed both."""
from __future__ import annotations

import math
from collections import Counter

import msgpack
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from wagon.replay.events import PageVisit
from wagon.replay.metrics import LE, PAGE_SERIES, Snapshot, Tally, exposition

PAGES = 12
#: a visit: page, time (s) or None (never done), errors
VISITS = st.lists(st.tuples(st.integers(0, PAGES - 1),
                            st.one_of(st.none(), st.floats(1e-5, 120.0)),
                            st.integers(0, 2)), max_size=60)


def fed(visits) -> Tally:
    t = Tally()
    for page, took, errors in visits:
        t.on_page(PageVisit(session=0, cls=0, page=page, intended=0.0, start=10.0,
                            done=None if took is None else 10.0 + took, errors=errors))
    return t


def times(visits, page: int) -> np.ndarray:
    """A page's visit times as the Tally sees them (done − start)."""
    return np.array([(10.0 + took) - 10.0 for p, took, _ in visits
                     if p == page and took is not None])


@given(VISITS, VISITS)
def test_merged_states_equal_one_tally_fed_both(a, b):
    merged = Tally()
    merged.merge(fed(a).state())
    merged.merge(msgpack.unpackb(msgpack.packb(fed(b).state()), strict_map_key=False))
    both = fed(a + b)
    got, want = merged.page_times.state(), both.page_times.state()
    assert (got["cells"], got["counts"]) == (want["cells"], want["counts"])
    assert merged.page_times.top == both.page_times.top
    assert merged.pages.keys() == both.pages.keys()
    for p, v in both.pages.items():
        assert merged.pages[p][:2] + merged.pages[p][3:] == v[:2] + v[3:]
        assert math.isclose(merged.pages[p][2], v[2], rel_tol=1e-12, abs_tol=1e-12)


def test_page_percentiles_are_the_nearest_rank_of_its_visits_whole_or_since():
    rng = np.random.default_rng(7)
    visits = [(int(p), float(took), 0) for p, took in
              zip(rng.zipf(1.6, 4000) % PAGES, rng.lognormal(-3.0, 1.2, 4000))]
    t, half = fed(visits[:1500]), fed(visits[1500:])
    half.merge(t.state())
    since = half.page_times.since(t.page_times)      # the second half's visits alone
    for h, part in ((half.page_times, visits), (since, visits[1500:])):
        every = h.percentiles((50, 90, 99))
        for page in range(PAGES):
            x = times(part, page)
            got = h.of(page).percentiles((50, 90, 99))
            if not len(x):
                assert got is None and page not in every
                continue
            want = np.percentile(x, (50, 90, 99), method="inverted_cdf")
            # a bin's middle is within 0.05 % of every value in it
            assert np.allclose(got, want, rtol=5.01e-4, atol=0), page
            assert every[page] == (len(x), got)


@settings(max_examples=40)                     # Prometheus' parser is slow: 20 ms a run
@given(VISITS)
def test_page_seconds_hold_the_most_visited_pages(visits):
    text = exposition(Snapshot(tally=fed(visits)), ["c"], [f"/p{k}" for k in range(PAGES)],
                      False)
    fam = {f.name: f.samples for f in text_string_to_metric_families(text)}["wagon_page_seconds"]
    n = Counter(p for p, _, _ in visits)
    top = sorted(n, key=lambda p: (-n[p], p))[:PAGE_SERIES]
    assert {s.labels["id"] for s in fam} == {str(p) for p in top}
    for p in top:
        x = times(visits, p)
        mine = [s for s in fam if s.labels["id"] == str(p)]
        assert {s.labels["page"] for s in mine} == {f"/p{p}"}
        count = [s.value for s in mine if s.name.endswith("_count")]
        total = [s.value for s in mine if s.name.endswith("_sum")]
        assert count == [len(x)] and math.isclose(total[0], x.sum(), abs_tol=1e-9)
        for s in mine:
            if s.name.endswith("_bucket"):
                bound = float(s.labels["le"])
                # a value less than 0.1 % above a bound may be counted below it
                near = np.count_nonzero((x > bound) & (x <= bound * 1.001))
                assert 0 <= s.value - np.count_nonzero(x <= bound) <= near, (p, bound)
        assert len(mine) == len(LE) + 3
