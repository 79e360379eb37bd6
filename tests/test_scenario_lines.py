"""Scenario session lines written and read with NumPy: the bytes are the documented ``%``
templates' (Python's own formatting is the observer), the sessions read are those ``json``
decodes line by line, and a bad line still stops the read with its one-line error."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.formats.scenario import (ScenarioError, ScenarioWriter, SessionBatch, _parse,
                                    read_scenario)
from wagon.synth import Generator, SynthOptions

from .test_synth import hand_model

HEADER = {**Generator(hand_model(), SynthOptions(sessions=1, pages=50)).header(),
          "agents": [{"family": "curl", "user_agent": "curl/8"}] * 2}
for _page in HEADER["site"]["pages"]:         # two views a page: clicks may name 0, 1 or 2
    _page["views"] = [{"objects": _page["objects"][:1] * 2,
                       "revalidated": [1] if _page["objects"] else []},
                      {"objects": [], "page_revalidated": True}]

# think times in seconds: wide magnitudes, exact binary ties and values a hair from them
times = st.one_of(st.floats(0, 1e6, allow_nan=False),
                  st.integers(0, 10 ** 7).map(lambda k: k / 1000 + 0.0005),
                  st.integers(0, 10 ** 7).map(lambda k: k / 2 ** 11),
                  st.sampled_from([0.0, 0.0005, 0.0015, 2.675, 1e-7, 999999.9995]))


@st.composite
def session_batches(draw, agents: bool | None = None) -> SessionBatch:
    """Sessions as the writer takes them, with or without agents and views."""
    n = draw(st.integers(1, 12))
    clicks = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    m = sum(clicks)
    starts = np.sort(np.array(draw(st.lists(times, min_size=n, max_size=n))))
    thinks = np.array(draw(st.lists(times, min_size=m, max_size=m)))
    with_agents = draw(st.booleans()) if agents is None else agents
    return SessionBatch(
        np.cumsum(draw(st.lists(st.integers(1, 10 ** 11), min_size=n, max_size=n))), starts,
        np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))),
        np.concatenate(([0], np.cumsum(clicks))),
        np.array(draw(st.lists(st.integers(0, 49), min_size=m, max_size=m))), thinks,
        np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
        if with_agents else None,
        np.array(draw(st.lists(st.integers(0, 2), min_size=m, max_size=m)))
        if draw(st.booleans()) else None)


def documented(b: SessionBatch) -> str:
    """The batch as docs/formats.md's templates write it, one session at a time."""
    out = []
    for i in range(len(b)):
        a, z = b.click_ptr[i], b.click_ptr[i + 1]
        clicks = (",".join("[%d,%.3f]" % (p, t) for p, t in zip(b.pages[a:z], b.thinks[a:z]))
                  if b.views is None else ",".join(
                      "[%d,%.3f,%d]" % c for c in zip(b.pages[a:z], b.thinks[a:z],
                                                      b.views[a:z])))
        agent = "" if b.agents is None else ',"agent":%d' % b.agents[i]
        out.append('{"id":%d,"start":%.6f,"class":%d%s,"clicks":[%s]}\n'
                   % (b.ids[i], b.starts[i], b.classes[i], agent, clicks))
    return "".join(out)


def write(path, batches: list[SessionBatch]) -> None:
    with open(path, "w") as f:
        w = ScenarioWriter(f, HEADER)
        for b in batches:
            w.write(b)


@settings(max_examples=100, deadline=None)
@given(session_batches())
def test_the_writer_writes_the_documented_bytes(b):
    out = io.StringIO()
    ScenarioWriter(out, HEADER).write(b)
    assert out.getvalue().split("\n", 1)[1] == documented(b)


def test_synthesized_batches_are_the_documented_bytes():
    gen = Generator(hand_model(), SynthOptions(sessions=3000, seed=3, chunk=1000))
    for b in gen.batches():
        out = io.StringIO()
        ScenarioWriter(out, {}).write(b)
        assert out.getvalue().split("\n", 1)[1] == documented(b)


def json_sessions(path) -> list[tuple]:
    """The sessions as ``json`` decodes the file, line by line (the independent reader)."""
    with open(path) as f:
        f.readline()
        return [(d["id"], float(d["start"]), d["class"], d.get("agent"),
                 [(c[0], float(c[1])) for c in d["clicks"]],
                 [c[2] if len(c) == 3 else 0 for c in d["clicks"]])
                for d in map(json.loads, filter(str.strip, f))]


@settings(max_examples=40, deadline=None)
@given(st.lists(session_batches(agents=True), min_size=1, max_size=4), st.integers(16, 400))
def test_the_reader_gives_the_sessions_json_gives(tmp_path_factory, parts, block):
    path = tmp_path_factory.mktemp("sc") / "s.jsonl"
    last, last_id = 0.0, 0
    for b in parts:                         # one file: starts and ids in order across batches
        b.starts, b.ids = last + b.starts, last_id + b.ids
        last, last_id = float(b.starts[-1]), int(b.ids[-1])
    write(path, parts)
    sc = read_scenario(path)
    got = [(s.id, s.start, s.cls, s.agent, s.clicks, [s.view(k) for k in range(len(s.clicks))])
           for s in sc.sessions()]
    assert got == json_sessions(path)
    rows = [b for b in sc.batches(block)]
    assert np.array_equal(np.concatenate([b.ids for b in rows]), [g[0] for g in got])
    assert np.array_equal(np.concatenate([b.thinks for b in rows]),
                          [t for g in got for _, t in g[4]])


def test_the_writers_lines_are_read_with_numpy_and_other_spellings_line_by_line(tmp_path):
    gen = Generator(hand_model(), SynthOptions(sessions=2000, seed=5))
    b = next(gen.batches())
    text = documented(b)
    assert _parse(text.encode(), 4) is not None
    lines = text.splitlines(keepends=True)
    lines[7] = json.dumps(json.loads(lines[7]), indent=None) + "\n"   # spaces: still JSON
    lines[9] = lines[9].replace('"start":', '"start": ')
    assert _parse("".join(lines).encode(), 4) is None
    path = tmp_path / "s.jsonl"
    with open(path, "w") as f:
        ScenarioWriter(f, gen.header())
        f.write("".join(lines))
    got = [(s.id, s.start, s.cls, s.agent, s.clicks, [s.view(k) for k in range(len(s.clicks))])
           for s in read_scenario(path).sessions()]
    assert got == json_sessions(path)


@pytest.mark.parametrize("bad, message", [
    (lambda s: s.replace('"class":0', '"class":07', 1), "not JSON"),
    (lambda s: s.replace('"class":0', '"class":9', 1), "class 9 does not exist"),
    (lambda s: s.replace(",0.000]", ",-1.000]", 1), "think time must be in"),
    (lambda s: s[:s.index('"clicks"')] + '"clicks":[]}', "at least one click"),
    (lambda s: '{"id":1,' + s.split(",", 1)[1], "is not above the previous one"),
])
def test_a_bad_line_deep_in_a_block_is_named_after_the_sessions_before_it(tmp_path, bad,
                                                                          message):
    gen = Generator(hand_model(), SynthOptions(sessions=3000, seed=2))
    b = next(gen.batches())
    lines = documented(b).splitlines()
    k = next(i for i in range(1500, len(lines)) if '"class":0' in lines[i])
    lines[k] = bad(lines[k])
    path = tmp_path / "s.jsonl"
    with open(path, "w") as f:
        ScenarioWriter(f, gen.header())
        f.write("\n".join(lines) + "\n")
    seen = []
    with pytest.raises(ScenarioError) as e:
        for s in read_scenario(path).sessions():
            seen.append(s.id)
    assert f"s.jsonl:{k + 2}:" in str(e.value) and message in str(e.value)
    assert "\n" not in str(e.value)
    assert seen == list(range(k))


@settings(max_examples=200, deadline=None)
@given(session_batches(), st.data())
def test_a_block_read_with_numpy_is_what_json_reads_whatever_the_bytes(b, data):
    """Soundness of the fast path: one byte of a written block inserted, replaced or removed;
    when NumPy still reads the block, its sessions are exactly json's."""
    text = bytearray(documented(b).encode())
    at = data.draw(st.integers(0, len(text) - 1))
    byte = data.draw(st.sampled_from(b'0123456789.-e+ ,:[]{}"\n'))
    op = data.draw(st.sampled_from(["insert", "replace", "remove"]))
    if op == "insert":
        text.insert(at, byte)
    elif op == "replace":
        text[at] = byte
    else:
        del text[at]
    read = _parse(bytes(text), 3 if b.agents is None else 4, 2 if b.views is None else 3)
    if read is None:
        return
    lines = [json.loads(line) for line in bytes(text).split(b"\n")[:-1]]
    assert [d["id"] for d in lines] == read.ids.tolist()
    assert [float(d["start"]) for d in lines] == read.starts.tolist()
    assert [d["class"] for d in lines] == read.classes.tolist()
    assert [d.get("agent") for d in lines] == (read.agents.tolist() if read.agents is not None
                                               else [None] * len(lines))
    assert [tuple(c) for d in lines for c in d["clicks"]] == list(zip(
        read.pages.tolist(), read.thinks.tolist(),
        *(() if read.views is None else (read.views.tolist(),))))
    assert all(type(c[0]) is int for d in lines for c in d["clicks"])
