"""Every scenario wagon reads is checked: hypothesis mutates one field of a valid scenario (its
header's site and classes, or a session line) into a value the format forbids, and the one
reader must refuse it with a ScenarioError naming the line: zero tracebacks, zero invalid files
accepted. The mutations are invalid by construction (docs/formats.md, scenario files), so the
oracle is the format's rules, not the reader."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon.cli import main
from wagon.formats.scenario import ScenarioError, read_scenario

from .servers import write_scenario_file

#: values a field of each kind must never take
NOT_A_URL = [0, None, [], {}, "", "no-slash", "/x\n", "/\x00", "/" + "a" * 3000, True]
NOT_A_SIZE = [-1, 10**18, 1.5, "12", True, None, [], float("nan")]
NOT_INDICES = ["x", [True], [-1], [99], [1.0], None, 5]
NOT_A_SESSION_FIELD = {"id": [None, "1", 1.5, True, -7, 10**20], "start": [None, "0", -1.0, True, 2e7],
                       "class": [None, 5, -1, 1.0, True, "0"],
                       "clicks": [None, [], [[0]], [[0, -1.0]], [[99, 0.0]], [["0", 0.0]],
                                  [[0, "1"]], [[True, 0.0]], "x", [[0, 0.0, 1]], [[0, True]],
                                  [[0, 0.0, -1]], [[0, 0.0, 0, 0]], [[0, 2e7]]],
                       "agent": [9, -1, True, "0", 1.5]}
#: a header class's field → values it must never hold (found by bench/mutations_audit.py:
#: accepted, then a TypeError in replay, or silently played)
NOT_A_CLASS_FIELD = {("weight",): [-1, "x", True, None], ("name",): [5, None],
                     ("network", "rtt_ms"): ["x", -5, float("nan")],
                     ("network", "down_kbps"): [0, "1"], ("network", "loss"): [1, "x"],
                     ("protocol", "connections"): [0, "2", 1.5, True, 10**20],
                     ("protocol", "pipeline"): [None, "no", 1], ("protocol", "http2"): [1],
                     ("network",): [None, {"name": "lan"}],
                     ("protocol",): ["http11", {"name": "x", "extra": 1}]}


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    """A valid scenario's lines: 2 pages, 2 objects, 1 class, 3 sessions."""
    path = write_scenario_file(tmp_path_factory.mktemp("valid") / "s.jsonl",
                               [("/a.html", 100, [0, 1]), ("/b.html", 50, [])],
                               [("/o0.gif", 10), ("/o1.gif", 20)], ["lan/http11"],
                               [(0.0, 0, [(0, 0.0), (1, 1.0)]), (0.5, 0, [(1, 0.0)]),
                                (1.0, 0, [(0, 0.0)])])
    assert len(list(read_scenario(path).sessions())) == 3
    return path.read_text().splitlines()


def _mutated(valid: list[str], data) -> tuple[list[str], int]:
    """One forbidden value in one place; the lines and the line number it is on."""
    header = json.loads(valid[0])
    sessions = [json.loads(x) for x in valid[1:]]
    site = header["site"]
    where = data.draw(st.sampled_from(["page url", "page size", "page objects", "page links",
                                       "object url", "object size", "pages", "objects",
                                       "classes", "class field", "version", "options",
                                       "session", "duplicate id", "order"]))
    line = 1
    if where in ("page url", "page size", "page objects", "page links"):
        page = data.draw(st.sampled_from(site["pages"]))
        key = where.split()[1]
        page[key] = data.draw(st.sampled_from(
            NOT_A_URL if key == "url" else NOT_A_SIZE if key == "size" else NOT_INDICES))
    elif where in ("object url", "object size"):
        obj = data.draw(st.sampled_from(site["objects"]))
        key = where.split()[1]
        obj[key] = data.draw(st.sampled_from(NOT_A_URL if key == "url" else NOT_A_SIZE))
    elif where in ("pages", "objects"):
        site[where] = data.draw(st.sampled_from([None, "x", [1], [[]]] +
                                                ([[]] if where == "pages" else [])))
    elif where == "classes":
        header["classes"] = data.draw(st.sampled_from([None, [], "x", [1], [{}]]))
    elif where == "class field":
        field = data.draw(st.sampled_from(sorted(NOT_A_CLASS_FIELD)))
        parent = header["classes"][0]
        for key in field[:-1]:
            parent = parent[key]
        parent[field[-1]] = data.draw(st.sampled_from(NOT_A_CLASS_FIELD[field]))
    elif where == "version":
        header["version"] = data.draw(st.sampled_from([True, 0, "1", 1.0, None]))
    elif where == "options":                    # replay read options.speedup unchecked
        header["options"] = data.draw(st.sampled_from([None, "x", [], {"speedup": 0},
                                                       {"speedup": "2"}, {"speedup": True},
                                                       {"speedup": 1e7}, {"speedup": 1e-6}]))
    elif where == "session":
        k = data.draw(st.integers(0, len(sessions) - 1))
        field = data.draw(st.sampled_from(sorted(NOT_A_SESSION_FIELD)))
        value = data.draw(st.sampled_from(NOT_A_SESSION_FIELD[field]))
        if value is None and field == "agent":
            return valid, 0
        sessions[k][field] = value
        line = k + 2
    elif where == "duplicate id":
        sessions[2]["id"] = sessions[1]["id"]
        line = 4
    else:
        sessions[1]["start"], sessions[2]["start"] = 2.0, 1.5
        line = 4
    return [json.dumps(header)] + [json.dumps(s) for s in sessions], line


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_forbidden_value_is_one_line_naming_its_line(tmp_path_factory, valid, data):
    lines, line = _mutated(valid, data)
    if not line:
        return
    path = tmp_path_factory.mktemp("mutant") / "m.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ScenarioError) as e:
        list(read_scenario(path).sessions())
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{path}:{line}:"), message


def test_export_of_a_forbidden_scenario_is_exit_2(tmp_path, valid):
    """Through a command (the issue's observer): a duplicate id, a page URL of 0, an object of
    1e18 bytes, a non-list site.objects, a class of "2" connections (accepted before, then a
    TypeError in replay), a start of 1e308 s (no log date: an OverflowError before), a think
    time of 1e300 s (issue 36: exit 0, 71 of 412 lines written): exit 2, one line, no
    traceback."""
    for mutate in (lambda h, s: s[2].update(id=s[1]["id"]),
                   lambda h, s: h["site"]["pages"][0].update(url=0),
                   lambda h, s: h["site"]["objects"][1].update(size=10**18),
                   lambda h, s: h["site"].update(objects="x"),
                   lambda h, s: h["classes"][0]["protocol"].update(connections="2"),
                   lambda h, s: s[2].update(start=1e308),
                   lambda h, s: s[0]["clicks"][1].__setitem__(1, 1e300)):
        header, sessions = json.loads(valid[0]), [json.loads(x) for x in valid[1:]]
        mutate(header, sessions)
        path = tmp_path / "m.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in [header] + sessions) + "\n")
        r = CliRunner().invoke(main, ["export", str(path), "--to", "clf", "-o",
                                      str(tmp_path / "x.log")])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        assert "Traceback" not in r.output and not (tmp_path / "x.log").exists()
