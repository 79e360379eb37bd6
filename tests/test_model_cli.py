"""The model file and ``wagon fit``: outputs, JSON keys, errors as one line with exit status 2."""
from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wagon
from wagon import load_model
from wagon.cli import main
from wagon.formats.model import MODEL_VERSION, ModelError
from wagon.synth.site import concrete_url

VARIABLES = ("interarrival", "clicks", "think", "page_size", "objects_per_page")


def run(*args, input=None):
    return CliRunner().invoke(main, list(map(str, args)), input=input, catch_exceptions=False)


def test_fit_json_summary_keys(sample_model):
    _, summary = sample_model
    assert {"lines", "parsed", "malformed", "sessions", "variables"} <= set(summary)
    assert summary["lines"] == summary["parsed"] + summary["malformed"] == 24_545
    assert summary["malformed"] == 5
    for name in VARIABLES:
        v = summary["variables"][name]
        assert {"best", "params", "table"} <= set(v)
        assert v["best"] in {row["law"] for row in v["table"]}


def test_model_round_trip_and_privacy(sample_model):
    path, summary = sample_model
    model = load_model(path)
    assert model.provenance["sessions"] == summary["sessions"]
    think = model.variables["think"]
    assert think.law == "lognormal" and think.parent.mean() > 0
    text = path.read_text()
    assert "example.net" not in text.replace("www.example.net", "")   # no client host names
    assert "Mozilla" not in text                                        # no user agents
    pages = model.site["pages"]
    assert pages[0]["url"] == "/" and all(0 <= o < len(model.site["objects"])
                                          for p in pages for o in p["objects"])


def _damaged(tmp_path, sample_model, edit):
    data = json.loads(sample_model[0].read_text())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    return bad


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="something-else"), "'format' is not"),
    (lambda d: d.update(version=99), "newer than this wagon reads"),
    (lambda d: d["variables"]["think"].update(best="cauchy"), "unknown law 'cauchy'"),
    (lambda d: d["variables"]["think"]["params"].update(sigma=-1), "out of range"),
    (lambda d: d["site"]["pages"][0]["objects"].append(10**6), "object that does not exist"),
    (lambda d: d.update(site=[]), "'site' is not an object"),
    (lambda d: d.pop("variables"), "'variables' is missing"),
    (lambda d: d["variables"]["think"]["ci"].update(mu=[3.1, 2.9]), "'ci' must map"),
    (lambda d: d["variables"]["think"]["se"].update(mu=-0.1), "'se' must map"),
    (lambda d: d["variables"]["think"]["se"].update(shape=0.1), "'se' must map"),
    (lambda d: d["variables"]["think"]["ci_method"].update(mu="guess"), "'ci_method' must map"),
])
def test_damaged_models_give_one_line_errors(tmp_path, sample_model, edit, message):
    bad = _damaged(tmp_path, sample_model, edit)
    with pytest.raises(ModelError, match=message) as e:
        load_model(bad)
    assert "\n" not in str(e.value)


def test_intervals_in_the_json_and_the_model(sample_model):
    """Every chosen law's parameters carry a standard error and an interval around the
    estimate, the same in ``--json`` and in the model read back; the spliced law's none (its
    body is the data)."""
    path, summary = sample_model
    model = load_model(path)
    assert model.data["version"] == MODEL_VERSION         # the writer writes the newest
    for name, v in summary["variables"].items():
        if v["best"] == "spliced":
            assert "ci_method" not in v and not model.variables[name].ci_method
            continue
        assert set(v["ci_method"]) == set(v["params"]), name
        read = model.variables[name]
        assert read.se == v["se"] and read.ci_method == v["ci_method"]
        for k, value in v["params"].items():
            if v["ci_method"][k] == "fixed":
                continue
            lo, hi = read.ci[k]
            assert [lo, hi] == v["ci"][k] and lo < value < hi and v["se"][k] > 0, (name, k)


def test_intervals_printed_are_the_models(nasa_model):
    """``wagon fit``'s table of the chosen laws' parameters: each number the model's, to the
    four digits printed."""
    path, printed = nasa_model
    variables = load_model(path).variables
    lines = printed.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("parameters of the chosen"))
    name, seen = None, 0
    for line in lines[at + 2:]:
        if not line.strip():
            break
        if not line.startswith(" "):
            name, line = line.split()[0], line[len(line.split()[0]):]
        k, value, se, lo, hi, method = line.split()
        v = variables[name]
        assert [value, se, lo, hi, method] == [f"{v.params[k]:.4g}", f"{v.se[k]:.4g}",
                                               f"{v.ci[k][0]:.4g}", f"{v.ci[k][1]:.4g}",
                                               v.ci_method[k]], (name, k)
        seen += 1
    assert seen == sum(len(v.params) for v in variables.values() if v.law != "spliced") == 4


def test_version_2_models_read_without_intervals(tmp_path, sample_model):
    def to_version_2(d):
        d["version"] = 2
        for v in d["variables"].values():
            for key in ("se", "ci", "ci_method", "ci_note"):
                v.pop(key, None)
    old = load_model(_damaged(tmp_path, sample_model, to_version_2))
    think = old.variables["think"]
    assert think.law == "lognormal" and think.se == {} and think.ci == {}


def test_foreign_files(tmp_path):
    for content, message in ((b"{not json", "JSON error"), (b"\xff\xfe\x00", "not text"),
                             (b"[1, 2]", "not a JSON object")):
        p = tmp_path / "f.json"
        p.write_bytes(content)
        with pytest.raises(ModelError, match=message):
            load_model(p)
    with pytest.raises(ModelError, match="No such file"):
        load_model(tmp_path / "missing.json")


def test_fit_real_traces_text_output(nasa_model, epa_model):
    _, printed = nasa_model
    assert "lines 20,000  parsed 20,000  malformed 0" in printed
    assert "format common (auto-detected" in printed
    path, summary, stderr = epa_model
    assert summary["malformed_by_reason"] == {"bad request line": 1}
    assert "skipped epa-http-aug95-half.log.gz:4531 (bad request line)" in stderr
    assert load_model(path).provenance["malformed"] == 1


def _head(sample, lines: int = 8_000) -> list[bytes]:
    """The sample's first lines (a third of it: every variable has values to fit)."""
    return gzip.decompress(sample.read_bytes()).splitlines(keepends=True)[:lines]


def test_fit_several_files_and_stdin(tmp_path, sample):
    raw = _head(sample)
    (tmp_path / "a.log").write_bytes(b"".join(raw[: len(raw) // 2]))
    (tmp_path / "b.log").write_bytes(b"".join(raw[len(raw) // 2:]))
    r = run("fit", tmp_path / "b.log", tmp_path / "a.log", "-o", tmp_path / "m.json", "--json")
    assert json.loads(r.stdout)["lines"] == len(raw)
    r = run("fit", "-", "-o", tmp_path / "s.json", "--json", input=b"".join(raw))
    assert r.exit_code == 0 and json.loads(r.stdout)["lines"] == len(raw)


def test_fit_plots(tmp_path, sample):
    (tmp_path / "head.log").write_bytes(b"".join(_head(sample)))
    r = run("fit", tmp_path / "head.log", "-o", tmp_path / "m.json", "--plots", tmp_path / "plots")
    assert r.exit_code == 0
    for name in VARIABLES:
        png = (tmp_path / "plots" / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_fit_errors_are_one_line_with_status_2(tmp_path):
    junk = tmp_path / "junk.log"
    junk.write_text("this is not\na log\n")
    for args in (("fit", junk), ("fit", tmp_path / "missing.log"),
                 ("fit", junk, "--format", "%h %Q")):
        r = run(*args, "-o", tmp_path / "m.json")
        assert r.exit_code == 2, r.output
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output
    r = run("fit", junk, "--tmin", "9", "--tmax", "1")
    assert r.exit_code == 2 and "tmin <= tmax" in r.stderr
    (tmp_path / "afile").write_text("")
    good = tmp_path / "good.log"
    good.write_text('h - - [01/Aug/1995:00:00:01 -0400] "GET /a.html HTTP/1.0" 200 10\n'
                    'h - - [01/Aug/1995:00:01:01 -0400] "GET /b.html HTTP/1.0" 200 10\n')
    for args, message in ((("--plots", tmp_path / "afile" / "p"), "cannot write plots"),
                          (("-o", tmp_path / "none" / "m.json"), "cannot write")):
        r = run("fit", good, *args)
        assert r.exit_code == 2 and message in r.stderr, r.output


def test_custom_format_option(tmp_path):
    log = tmp_path / "custom.log"
    log.write_text("".join(f'10.0.0.{i % 7}|{i // 60:02d}/Aug/2024:10:{i % 60:02d}:00 +0000|'
                           f'GET /p{i % 5}.html HTTP/1.1|200|{100 + i}\n' for i in range(60, 400)))
    r = run("fit", log, "--format", "%h|%{%d/%b/%Y:%H:%M:%S %z}t|%r|%>s|%b", "-o",
            tmp_path / "m.json", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["parsed"] == 340


def test_a_log_of_robots_only_is_a_one_line_error(tmp_path):
    log = tmp_path / "robots.log"
    log.write_text('bot - - [01/Aug/1995:00:00:01 -0400] "GET /robots.txt HTTP/1.0" 200 10\n')
    r = run("fit", log, "-o", tmp_path / "m.json")
    assert r.exit_code == 2 and "no session left" in r.stderr and "Traceback" not in r.output


def test_one_line_log(tmp_path):
    log = tmp_path / "one.log"
    log.write_text('h - - [01/Aug/1995:00:00:01 -0400] "GET /a.html HTTP/1.0" 200 10\n')
    r = run("fit", log, "-o", tmp_path / "m.json", "--json")
    summary = json.loads(r.stdout)
    assert r.exit_code == 0 and summary["formats"][str(log)].startswith("common (auto-detected: 1/1")
    assert set(summary["skipped_variables"]) == {"interarrival", "clicks", "think", "page_size",
                                                 "objects_per_page", "object_size"}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) |
                    st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=4) |
                    st.dictionaries(st.sampled_from(["format", "version", "variables", "site",
                                                     "best", "params", "pages", "objects",
                                                     "entry", "transitions", "url", "mu",
                                                     "se", "ci", "ci_method"]),
                                    inner, max_size=5), max_leaves=20)


# 100 documents a run, drawn anew each run (no example database)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(JSON)
def test_load_model_only_ever_raises_model_error(tmp_path, doc):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"format": "wagon-model", "version": 1, **doc}
                            if isinstance(doc, dict) else doc))
    try:
        load_model(p)
    except ModelError as e:
        assert "\n" not in str(e)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=60) | JSON.map(json.dumps), max_size=5))
def test_scenario_reader_only_ever_raises_scenario_error(tmp_path, lines):
    from wagon.formats.scenario import ScenarioError, read_scenario
    header = json.dumps({"format": "wagon-scenario", "version": 1,
                         "classes": [{"name": "c", "weight": 1, "network": {
                             "name": "lan", "rtt_ms": 0, "down_kbps": 1e6, "up_kbps": 1e6},
                             "protocol": {"name": "http11"}}],
                         "site": {"pages": [{"url": "/", "size": 1, "objects": []}],
                                  "objects": []}})
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join([header] + [line.replace("\n", " ") for line in lines]) + "\n")
    try:
        list(read_scenario(p).sessions())
    except ScenarioError as e:
        assert "\n" not in str(e)


def test_a_sampled_log_is_said_to_be_one(tmp_path, nasa, nasa_model, epa_model):
    """NASA's morning keeping one line in three (as a sampling logger would): a third of its
    clicks begin on an object whose page went unlogged, and wagon fit says the log looks
    sampled, on the console and in --json, and takes no image for a page (the complete log
    keeps the images its users opened alone as pages); the complete NASA and EPA logs (3 % and
    0.8 %) are not said to be sampled. Synthesis from the sampled log's model works."""
    from wagon.modeling import fit_logs
    thinned = tmp_path / "thin.log"
    thinned.write_bytes(b"".join(gzip.decompress(nasa.read_bytes()).splitlines(True)[2::3]))
    result = fit_logs([str(thinned)])
    summary = result.summary_json(str(tmp_path / "m.json"), [])
    assert summary["looks_sampled"] and 0.25 < summary["object_click_share"] < 0.5
    assert ("the log looks sampled or filtered: 33 % of its clicks"
            in result.summary_text(str(tmp_path / "m.json"), []))
    assert "looks sampled" not in nasa_model[1]
    assert epa_model[1]["looks_sampled"] is False and epa_model[1]["object_click_share"] < 0.05
    images = (".gif", ".jpg", ".xbm")           # what NASA's objects are
    thin_pages = [p["url"] for p in result.model.data["site"]["pages"]]
    full_pages = [p["url"] for p in json.loads(nasa_model[0].read_text())["site"]["pages"]]
    assert len(thin_pages) > 100 and not [u for u in thin_pages if u.endswith(images)]
    assert len([u for u in full_pages if u.endswith(images)]) > 20   # a complete log's own
    sc = wagon.synthesize(result.model, sessions=200, seed=1)
    clicked = {sc.site.page_urls[p] for p in sc.to_frame()["page"]}
    known = {concrete_url(p["url"], p.get("params", {}))      # a template page stays one
             for p in result.model.data["site"]["pages"]}
    assert all(u in known or u.startswith("/wagon-once/") for u in clicked)


def test_images_linked_from_other_sites_are_not_a_samples_mark(tmp_path):
    """A complete log of a site whose images other sites' pages show (a forum's thread, a
    search engine's image results): clicks that begin on an object whose Referer is another
    site's page are counted as linked, not as pages the log lost. A search engine whose
    Referers name one URL of the log (its bare origin, ``https://www.google.com/``, names
    ``/``) is not the site; the site's own origin names its pages."""
    from wagon.modeling import fit_logs
    from wagon.modeling.model import looks_sampled, object_click_share

    def line(k: int, second: int, url: str, referer: str) -> str:
        return (f'10.0.{k // 250}.{k % 250} - - [01/Aug/2001:10:{second // 60:02d}:'
                f'{second % 60:02d} +0000] "GET {url} HTTP/1.1" 200 1000 "{referer}" '
                f'"Mozilla/5.0 (X11; Linux x86_64) Firefox/{k}.0"\n')

    lines, site = [], "http://www.example.test"
    for k in range(120):                           # readers of the site: a page, its image
        page = "/" if k % 7 == 0 else f"/p{k % 7}.html"      # Google names "/" alone
        lines += [line(k, 2 * k, page, "https://www.google.com/"),
                  line(k, 2 * k, "/logo.png", site + page)]
    linked = [(k, "/hot.jpg", "http://forum.example.org/thread/9") for k in range(200, 260)]
    linked += [(k, "/logo.png", "https://www.google.com/imgres?imgurl=logo.png")
               for k in range(300, 330)]
    lones = [(k, "/logo.png", site + "/lost.html") for k in range(400, 410)]
    for k, url, referer in linked + lones:
        lines.append(line(k, k, url, referer))
    log = tmp_path / "linked.log"
    log.write_text("".join(sorted(lines, key=lambda s: s.split("[")[1])))
    result = fit_logs([str(log)])
    c = result.sessions.counts
    assert c["clicks"] == 120 + len(linked) + len(lones)
    assert c["object_clicks"] == len(linked) + len(lones)
    assert c["linked_clicks"] == len(linked)
    assert object_click_share(c) == pytest.approx(len(lones) / c["clicks"])
    assert not looks_sampled(c)
    assert "linked from other sites 90" in result.summary_text(str(tmp_path / "m.json"), [])
    from wagon.modeling.stages import LocalRunner   # the same whatever the clients' partitions
    cut = fit_logs([str(log)], runner=LocalRunner(partitions=7, piece_bytes=4096))
    assert cut.sessions.counts["linked_clicks"] == len(linked)
