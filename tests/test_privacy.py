"""Identifiers in URL paths become templates in the model; synth draws each click's values
from their laws; the model's site is bounded, its tail folded into a remainder that keeps the
popularity law."""
from __future__ import annotations

import io
import json
import re
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wagon import load_model
from wagon.cli import main
from wagon.formats.model import ModelError
from wagon.formats.scenario import read_scenario
from wagon.logs.paths import template_path
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import concrete_url, resolve_site


@pytest.mark.parametrize("url, template", [
    ("/user/12345/profile", "/user/{id}/profile"),
    ("/page/2", "/page/2"),                                         # small numbers are structure
    ("/news/98765.html", "/news/{id}.html"),
    ("/doc/3f2a9c4e-1b7d-4c2a-9e8f-0a1b2c3d4e5f/edit", "/doc/{uuid}/edit"),
    ("/u/jane.doe@example.org/inbox", "/u/{email}/inbox"),
    ("/u/jane.doe%40example.org", "/u/{email}"),
    ("/dl/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b/file.zip", "/dl/{hex}/file.zip"),
    ("/cart;jsessionid=A1B2C3D4E5F6/view;v=2", "/cart/view"),
    ("/s/Zx9kQ2mB7pL4vR8tW1yN3cH6", "/s/{token}"),
    ("/shuttle/missions/sts-69/sts-69.html", "/shuttle/missions/sts-69/sts-69.html"),
    ("/images/KSC-95EC-0911.jpg", "/images/KSC-95EC-0911.jpg"),
    ("/odd{brace}", "/odd%7Bbrace%7D"),
    ("/q?user=alice@example.org&page=3", "/q?user={email}&page=3"),
    ("/w/ACCESS%3Dgopher%40earth1.epa.gov%3D0.00", "/w/ACCESS%3D{email}%3D0.00"),  # EPA's
])
def test_identifier_segments_become_templates(url, template):
    assert template_path(url) == template


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abcdefABCDEFxyzXYZ._~+-0123456789@%;", max_size=40))
def test_segments_taken_as_plain_are_those_no_rule_changes(seg):
    """The fast path (``_PLAIN``: returned as they are) only takes segments that the rules
    would leave unchanged, hex-letter runs as long as a UUID's included."""
    from wagon.logs.paths import _PLAIN, _templated
    if _PLAIN.fullmatch(seg):
        assert _templated(seg) == seg


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["%3D", "%40", "@", "%2e", ".", "a", "B", "7", "org", "-"]),
                max_size=20))
def test_a_placeholder_never_splits_a_percent_escape(parts):
    """A segment's percent escapes stay whole: none of its placeholders begins after a '%' or
    one hex digit of an escape (a server answers such a URL 400)."""
    from wagon.logs.paths import _templated
    assert re.search(r"%[0-9A-Fa-f]?\{", _templated("".join(parts))) is None


def test_concrete_urls_are_deterministic_and_hold_no_placeholder():
    a = concrete_url("/user/{id}/doc/{uuid}")
    assert a == concrete_url("/user/{id}/doc/{uuid}") and "{" not in a
    assert a != concrete_url("/user/{id}/doc/{uuid}/edit".rsplit("/", 1)[0] + "x")
    assert concrete_url("/plain.html") == "/plain.html"


IDS = ["12345", "67890", "24680"]
UUIDS = ["3f2a9c4e-1b7d-4c2a-9e8f-0a1b2c3d4e5f", "7c9e6679-7425-40de-944b-e07fc1f90ae7"]


def _private_log() -> bytes:
    rows, t = [], 0
    for n in range(60):
        host = f"10.1.{n // 10}.{n % 10}"
        for url in (f"/user/{IDS[n % 3]}/profile", f"/doc/{UUIDS[n % 2]}/view",
                    f"/u/person{n}@example.org/inbox", f"/cart;jsessionid=S{n:06d}ABC",
                    f"/dl/{n:040x}"[:44] + "a" * 4):
            mm, ss = divmod(t, 60)
            hh, mm = divmod(mm, 60)
            rows.append(f'{host} - - [01/Aug/1995:{hh:02d}:{mm:02d}:{ss:02d} +0000] '
                        f'"GET {url} HTTP/1.0" 200 {500 + n}')
            t += 7
        t += n % 5                                   # sessions start at irregular gaps
    return ("\n".join(rows) + "\n").encode()


def test_the_model_holds_templates_and_synth_and_site_build_make_them_concrete(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(_private_log())
    run = CliRunner().invoke
    assert run(main, ["fit", str(log), "-o", str(tmp_path / "m.json")]).exit_code == 0
    text = (tmp_path / "m.json").read_text()
    # identifiers as they stand in a path (a bare "12345" may be digits of a p-value)
    for secret in [f"/{i}/" for i in IDS] + UUIDS + ["person1@", "jsessionid", "S000001"]:
        assert secret not in text, secret
    pages = {p["url"]: p for p in load_model(tmp_path / "m.json").site["pages"]}
    assert pages["/user/{id}/profile"]["variants"] == 3
    assert {"/doc/{uuid}/view", "/u/{email}/inbox", "/cart"} <= set(pages)
    assert run(main, ["fit", str(log), "-o", str(tmp_path / "k.json"), "--keep-paths"]
               ).exit_code == 0
    assert f"/{IDS[0]}/" in (tmp_path / "k.json").read_text()
    r = run(main, ["synth", str(tmp_path / "m.json"), "--sessions", "50", "--seed", "1",
                   "-o", str(tmp_path / "s.jsonl")])
    assert r.exit_code == 0, r.output
    sc = read_scenario(tmp_path / "s.jsonl")
    assert "/user/{id}/profile" in sc.site.page_urls        # a template, its values drawn
    asked = [s.url(k, sc.site) for s in sc.sessions() for k in range(len(s.clicks))]
    assert not any("{" in u for u in asked)
    profiles = {u for u in asked if u.startswith("/user/")}
    ids = [int(u.split("/")[2]) for u in profiles]             # int law: the log's range
    assert ids and min(map(int, IDS)) <= min(ids) and max(ids) <= max(map(int, IDS))
    assert not any(x in u for u in asked for x in UUIDS + ["person", "S000001"])
    r = run(main, ["site", "build", str(tmp_path / "site"), "--model", str(tmp_path / "m.json")])
    assert r.exit_code == 0, r.output
    assert "a page of an application" in r.output           # template pages: no file


@pytest.fixture(scope="module")
def nasa_models(tmp_path_factory, nasa, nasa_model):
    """The shared NASA fit (its 952 pages under the default --max-pages 2000: every page) and
    one keeping 100 pages."""
    out = tmp_path_factory.mktemp("bounded")
    shutil.copy(nasa_model[0], out / "full.json")
    r = CliRunner().invoke(main, ["fit", str(nasa), "-o", str(out / "small.json"),
                                  "--max-pages", "100"])
    assert r.exit_code == 0, r.output
    full = load_model(out / "full.json")
    assert "remainder" not in full.site                     # every page kept
    return full, load_model(out / "small.json"), out


def test_bounded_site_keeps_the_most_clicked_pages_and_a_remainder(nasa_models):
    full, small, out = nasa_models
    pages = full.site["pages"]
    rem = small.site["remainder"]
    assert len(small.site["pages"]) == 100 and rem["pages"] == len(pages) - 100
    assert [p["url"] for p in small.site["pages"]] == [p["url"] for p in pages[:100]]
    tail_hits = [p["hits"] for p in pages[100:]]
    assert rem["hits"] == sum(tail_hits)
    values, counts = np.unique(tail_hits, return_counts=True)
    assert rem["hit_counts"] == [[int(v), int(c)] for v, c in zip(values[::-1], counts[::-1])]
    assert rem["entry"] == sum(c for p, c in full.site["entry"] if p >= 100)
    assert (out / "small.json").stat().st_size < (out / "full.json").stat().st_size / 2


def test_synth_from_a_bounded_site_visits_the_remainder_as_often_as_the_log(nasa_models):
    full, small, _ = nasa_models
    share = small.site["remainder"]["hits"] / sum(p["hits"] for p in full.site["pages"])
    buf = io.StringIO()
    synthesize(Generator(small, SynthOptions(sessions=20_000, seed=3)), buf)
    lines = buf.getvalue().splitlines()
    site = json.loads(lines[0])["site"]
    tail = np.array([u.startswith("/wagon-tail/") for u in (p["url"] for p in site["pages"])])
    clicks = np.array([c[0] for line in lines[1:] for c in json.loads(line)["clicks"]])
    assert tail.sum() == min(small.site["remainder"]["pages"], 1000)
    print(f"remainder share of clicks: log {share:.4f}, synthesized {tail[clicks].mean():.4f}")
    assert tail[clicks].mean() == pytest.approx(share, rel=0.15)
    ranks = np.bincount(clicks[tail[clicks]] - tail.argmax(), minlength=tail.sum())
    assert ranks[: tail.sum() // 10].sum() > ranks[-(tail.sum() // 10):].sum()  # popular first
    assert resolve_site(small).spec.page_urls == [p["url"] for p in site["pages"]]


def test_model_version_1_still_reads_and_a_bad_remainder_is_refused(tmp_path, nasa_models):
    _, small, out = nasa_models
    data = json.loads((out / "small.json").read_text())
    old = dict(data, version=1)
    old["site"] = {k: v for k, v in data["site"].items() if k != "remainder"}
    (tmp_path / "v1.json").write_text(json.dumps(old))
    assert load_model(tmp_path / "v1.json").data["version"] == 1
    data["site"]["remainder"]["from"] = [[10**6, 3]]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ModelError, match="remainder 'from'"):
        load_model(tmp_path / "bad.json")
