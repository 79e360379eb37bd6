"""The statistics ``wagon recover`` rebuilds from the rows a dead process left: connections
played on a simulated clock, any of their rows lost with the process, against a count made
here from the rows themselves."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.replay.salvage import _stats
from wagon.formats.results import REQUEST_COLUMNS


def _row(conn: int, start: float, end: float, connected: float | None) -> dict:
    row = dict.fromkeys(REQUEST_COLUMNS, "")
    row.update(session="0", page="0", url="/", kind="page", conn=str(conn), intended=str(start),
               start=str(start), first_byte=str(end), last_byte=str(end), status="200",
               bytes="1", error="")
    if connected is not None:
        row.update(connect_start=str(connected - 0.01), connected=str(connected))
    return row


@st.composite
def runs(draw):
    """Connections opened over 30 s, each a run of back-to-back requests lasting up to 20 s
    (the first row carries the connect), and which rows survived."""
    rows = []
    for conn in range(draw(st.integers(1, 8))):
        t = draw(st.floats(0, 30))
        first = True
        for _ in range(draw(st.integers(1, 4))):
            end = t + draw(st.floats(0.001, 20))
            rows.append(_row(conn, t, end, t - 0.001 if first else None))
            first, t = False, end
    kept = draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    return [r for r, k in zip(rows, kept) if k]


@settings(max_examples=200, deadline=None)
@given(runs())
def test_no_connection_closes_before_it_opens_whatever_rows_were_lost(rows):
    """Held connections per second never go below 0 (a row's connection counted closed while
    its opening row died with the process showed -1), and every connection a surviving row
    names is counted once."""
    s = _stats(rows, [], (0.0, None)).summary(60.0, None, False)
    assert min(s["open_connections"]["per_second"], default=0) >= 0
    assert s["connections"] == len({r["conn"] for r in rows})
    ends = np.array([float(r["last_byte"]) for r in rows])
    if len(rows):       # at the last byte of all, nothing is held any more
        assert len(s["open_connections"]["per_second"]) <= int(ends.max()) + 1


def test_a_session_begun_after_the_last_time_recorded_is_completed(tmp_path):
    """A session that started a little ahead of its time has a row past the last time the dead
    process recorded: its other requests get their not_started rows too, as every due
    session's do, so each session in the recovered CSV has a row per request of the scenario."""
    from wagon.formats.scenario import read_scenario
    from wagon.replay.salvage import _missing

    from .servers import write_scenario_file
    sc = read_scenario(str(write_scenario_file(
        tmp_path / "s.jsonl", [("/a.html", 10, [0, 1])], [("/b.gif", 5), ("/c.gif", 5)],
        ["lan/http11"], [(0.0, 0, [(0, 0.0)]), (1.0, 0, [(0, 0.0)]), (2.0, 0, [(0, 0.0)])])))
    rows = [{"session": "0", "page": "0", "url": u, "request": str(k)}
            for k, u in enumerate(("/a.html", "/b.gif", "/c.gif"))]
    rows.append({"session": "1", "page": "0", "url": "/a.html", "request": "0"})  # at 0.9995
    extra = _missing(sc, (0, 1), 0.9995, "", rows)
    assert sorted((r[0], r[3]) for r in extra) == [(1, "/b.gif"), (1, "/c.gif")]
    # numbered after what each session recorded: (session, request) stays a key
    assert sorted((r[0], r[-2]) for r in extra) == [(1, 1), (1, 2)]
    assert [r[-1] for r in extra] == ["GET", "GET"]           # objects are asked with GET
