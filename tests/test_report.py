"""HTML reports render in a real browser: headless Chromium loads each report, every embedded
plot decodes, and no script error is raised."""
from __future__ import annotations

import re
import subprocess

from click.testing import CliRunner

from wagon.cli import main

from .conftest import require_tool
from .servers import nginx
from .test_replay import site_and_scenario  # noqa: F401  (fixture)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=10000"]


def rendered(page, profile) -> tuple[int, str | None]:
    """(images that decoded, script errors) as the page reports them after loading."""
    out = subprocess.run([require_tool("chromium"), *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    body = re.search(r"<body[^>]*>", out).group(0)
    images = re.search(r'data-images="(ok|broken) (\d+)"', body)
    errors = re.search(r'data-errors="([^"]*)"', body)
    assert images is not None and images.group(1) == "ok", body
    return int(images.group(2)), errors.group(1) if errors else None


def test_reports_render_with_their_plots(tmp_path, sample, sample_model,
                                        site_and_scenario):  # noqa: F811
    run = CliRunner().invoke
    model = sample_model[0]
    scenario = site_and_scenario("lan/http11,t1-dsl/http10x2", sessions=20)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        r = run(main, ["replay", str(scenario), "--target", server.url, "--results",
                       str(tmp_path / "r.csv")])
        assert r.exit_code == 0, r.output
    pages = {"model": ([str(model)], 7),           # 6 laws + keep-alive curve
             "log": ([str(sample)], 3),                         # load plots + 2 fitted laws
             "replay": ([str(tmp_path / "r.csv")], 2),           # load plots + latency
             "compare": (["--compare", str(sample), str(scenario)], 3)}
    for name, (args, want) in pages.items():
        out = tmp_path / f"{name}.html"
        r = run(main, ["report", *args, "-o", str(out)])
        assert r.exit_code == 0, r.output
        images, errors = rendered(out, tmp_path / f"chrome-{name}")
        assert images >= want and errors is None, (name, images, errors)
