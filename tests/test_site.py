"""One source of truth for the modeled site: the scenario carries it, and ``wagon serve`` and
``wagon site build`` give exactly its bytes, whether they start from the scenario or the model."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.site import SiteSpec, build_site, url_path
from wagon.formats.scenario import read_scenario

from .servers import free_port, wait_port
from .test_synth import hand_model


def _run(*args) -> None:
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output


def _served(port: int, urls: list[str]) -> dict[str, bytes]:
    return {u: urllib.request.urlopen(f"http://127.0.0.1:{port}{u}", timeout=10).read()
            for u in urls}


@contextlib.contextmanager
def _serving(scenario):
    """``wagon serve --scenario`` on a free port (yielded), stopped after."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--scenario", str(scenario),
                             "--port", str(port), "--max-time", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def model_and_scenario(tmp_path_factory):
    """A model without a site (a Zipf site is drawn) and a scenario synthesized with 37 pages:
    not the default 1000, so a server that rebuilt the site from defaults would differ."""
    d = tmp_path_factory.mktemp("site")
    model = d / "m.json"
    model.write_text(json.dumps(hand_model().data))
    scenario = d / "s.jsonl"
    _run("synth", model, "--sessions", "20", "--pages", "37", "-o", scenario)
    return model, scenario


def test_site_build_and_serve_give_the_scenario_site_byte_for_byte(tmp_path, model_and_scenario):
    model, scenario = model_and_scenario
    site = read_scenario(scenario).site
    assert len(site.page_urls) == 37
    _run("site", "build", tmp_path / "built", "--scenario", scenario)
    urls = site.page_urls + site.object_urls
    built = {u: (tmp_path / "built" / url_path(u)).read_bytes() for u in urls}
    for u, size in zip(site.object_urls, site.object_sizes):
        assert len(built[u]) == size
    for u, size in zip(site.page_urls, site.page_sizes):
        assert len(built[u]) >= size
    with _serving(scenario) as port:
        assert _served(port, urls) == built


def test_the_model_path_gives_the_same_site_as_the_scenario(tmp_path, model_and_scenario):
    model, scenario = model_and_scenario
    site = read_scenario(scenario).site
    _run("site", "build", tmp_path / "from-model", "--model", model, "--pages", "37")
    _run("site", "build", tmp_path / "from-scenario", "--scenario", scenario)
    for u in site.page_urls + site.object_urls:
        assert (tmp_path / "from-model" / url_path(u)).read_bytes() == \
            (tmp_path / "from-scenario" / url_path(u)).read_bytes(), u


def test_serve_and_site_build_need_exactly_one_source(tmp_path, model_and_scenario):
    model, scenario = model_and_scenario
    for args in (["serve"], ["serve", "--scenario", scenario, "--model", model],
                 ["site", "build", tmp_path / "x"],
                 ["site", "build", tmp_path / "x", "--scenario", scenario, "--model", model]):
        r = CliRunner().invoke(main, [str(a) for a in args])
        assert r.exit_code == 2 and "exactly one of" in r.stderr, r.output
    r = CliRunner().invoke(main, ["serve", "--scenario", str(model)])
    assert r.exit_code == 2 and "not a wagon scenario" in r.stderr


def test_a_url_whose_name_the_file_system_refuses_is_a_counted_skip(tmp_path):
    """EPA's /cgi-bin/waisgate?… objects carry names of 300 bytes and more: the file system
    refuses them (os.open raises ENAMETOOLONG past 255 bytes, asked here), so site build
    counts them as URLs that cannot be files and writes the rest, not a failed build."""
    long = "w" * 300
    with pytest.raises(OSError):
        (tmp_path / long).write_bytes(b"")
    site = SiteSpec.from_dict({"pages": [{"url": "/a.html", "size": 900, "objects": [0, 1]}],
                               "objects": [{"url": f"/cgi-bin/{long}?q=1", "size": 300},
                                           {"url": "/o.gif", "size": 200}]})
    report = build_site(site, tmp_path / "site")
    assert (report.pages, report.objects) == (1, 1)
    assert report.skipped == {"URL cannot be a file path": 1}
    assert (tmp_path / "site" / "o.gif").stat().st_size == 200


def test_serve_answers_a_templates_concrete_urls_as_site_build_wrote_them(tmp_path):
    """The concrete URLs a scenario's template clicks ask for (a path template's, a query
    template's): ``wagon serve`` answers each with the bytes ``site build`` wrote for it (a
    query's file under ``QUERY_DIR``, the one nginx and Apache serve), a URL of no page 404,
    and a marked one its status whatever its URL (as nginx's ``if`` before any file)."""
    from wagon.formats.site import query_path
    from .loop import scenario_header
    header = scenario_header(6, {
        "pages": [{"url": "/d/{n}.html", "size": 900, "objects": [],
                   "sizes": list(range(2000, 2000 + 101 * 30, 30))},
                  {"url": "/q?id={id}", "size": 700, "objects": [],
                   "sizes": list(range(5000, 5000 + 101 * 10, 10))}], "objects": []})
    urls = ["/d/1.html", "/d/2.html", "/q?id=5", "/q?id=6"]
    session = {"id": 0, "start": 0.0, "class": 0, "clicks": [[0, 0.0], [0, 1.0], [1, 1.0],
                                                            [1, 1.0]],
               "urls": [[k, u] for k, u in enumerate(urls)]}
    scenario = tmp_path / "s.jsonl"
    scenario.write_text(json.dumps(header) + "\n" + json.dumps(session) + "\n")
    _run("site", "build", tmp_path / "built", "--scenario", scenario)
    built = {u: (tmp_path / "built" / (query_path(u) or url_path(u))).read_bytes() for u in urls}
    assert len({len(b) for b in built.values()}) == 4       # each URL its own size
    with _serving(scenario) as port:
        assert _served(port, urls) == built
        for url, status in (("/e/1.html", 404), ("/e/1.html?wagon_status=410", 410)):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(f"http://127.0.0.1:{port}{url}", timeout=10)
            assert e.value.code == status
