"""Logs of any time resolution, end to end, against what was written (issue 22): session gaps
of a known exponential law, recorded as a log of milliseconds or microseconds records them
(floored times, ties included), are fitted through the library and through ``wagon fit`` as an
exponential whose rate is within four standard errors of the truth, observed on the log's
grid; the model records that grid; the arrival check calls them Poisson; the model does not
depend on the pieces, partitions or processes; real nginx's ``$msec`` is read on its grid."""
from __future__ import annotations

import json
import math
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.fitting import Observation
from wagon.modeling import FitOptions, fit_logs
from wagon.modeling.stages import LocalRunner

from .servers import nginx

EPOCH = 1_709_632_800                              # 2024-03-05 10:00:00 UTC
RATE, SESSIONS = 25.0, 3000                        # the symptom: 3,000 sessions at 25/s
#: the symptom's nginx layout (end times in ms, $msec) and Apache's microseconds
NGINX_MSEC = ('$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
              '"$http_referer" "$http_user_agent" $msec')
APACHE_USEC = '%h %l %u [%{%d/%b/%Y:%H:%M:%S}t.%{usec_frac}t] "%r" %>s %b'


def _line(layout: str, i: int, whole: int, frac: int, places: int) -> str:
    """Session i's one request at EPOCH + whole + frac·10^-places s, as ``layout`` logs it."""
    host = f"10.{i // 65536}.{i // 256 % 256}.{i % 256}"
    when = datetime.fromtimestamp(EPOCH + whole, timezone.utc)
    if layout == APACHE_USEC:
        return (f'{host} - - [{when.strftime("%d/%b/%Y:%H:%M:%S")}.{frac:06d}] '
                '"GET / HTTP/1.1" 200 512')
    return (f'{host} - - [{when.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET / HTTP/1.1" 200 512 '
            f'"-" "Mozilla/5.0" {EPOCH + whole}.{frac * 10 ** (3 - places):03d}')  # %T.%03M


def _poisson_log(path: Path, layout: str, places: int, seed: int = 1) -> np.ndarray:
    """A log of SESSIONS one-request sessions whose starts are a Poisson process of RATE,
    each time floored to 10^-places s; returns the recorded ticks (integers)."""
    t = np.cumsum(np.random.default_rng(seed).exponential(1 / RATE, SESSIONS))
    ticks = np.floor(t * 10 ** places).astype(np.int64)
    whole, frac = np.divmod(ticks, 10 ** places)
    path.write_text("".join(_line(layout, i, int(w), int(f), places) + "\n"
                            for i, (w, f) in enumerate(zip(whole, frac))))
    return ticks


def _model(result) -> dict:
    return {k: v for k, v in result.model.data.items() if k != "created"}


def _check_exponential(gaps: dict, step: float) -> None:
    """The exponential chosen, on the grid, its scale within 4 standard errors of 1/RATE
    (the MLE's standard error: scale/√n)."""
    n = gaps["n"]
    assert gaps["best"] == "exponential", [(r["law"], r["bic"], r["p_a2"]) for r in gaps["table"]]
    assert abs(gaps["params"]["scale"] - 1 / RATE) < 4 / RATE / math.sqrt(n), gaps["params"]
    assert Observation.from_dict(gaps["observation"]) == Observation.grid(step, lower=0.0)


@pytest.mark.parametrize("layout, places", [(NGINX_MSEC, 3), (APACHE_USEC, 6)])
def test_exponential_gaps_on_a_fine_grid_fit_as_an_exponential_of_their_rate(tmp_path, layout,
                                                                            places):
    """Gaps of 0 are cells, not exact zeros that every positive law refuses (the symptom chose
    a normal and refused to judge the arrivals); the rate comes back within 4 standard errors,
    the model says the grid, and the arrivals, spread inside their cells, are Poisson."""
    log = tmp_path / "access.log"
    ticks = _poisson_log(log, layout, places)
    result = fit_logs([str(log)], FitOptions(fmt=layout))
    step = 10.0 ** -places
    gaps = result.model.data["variables"]["interarrival"]
    _check_exponential(gaps, step)
    assert np.array_equal(result.sessions.samples["interarrival"], np.diff(ticks) * step)
    assert (gaps["min"] == 0) == bool(np.any(np.diff(ticks) == 0))    # ties, as written
    assert result.model.data["provenance"]["timestamp_resolution_s"] == step
    arrivals = result.model.arrivals
    assert arrivals["sessions"] == SESSIONS and arrivals["poisson"] is True, arrivals
    assert arrivals["spread"] == {"cell_s": step, "seed": 0}


def test_the_cli_fits_the_symptoms_log_the_same_with_one_process_or_two(tmp_path):
    """``wagon fit`` on the symptom's layout: the exponential, the arrivals Poisson, and the
    same model from one process as from two workers; the library's cut into pieces of 30 kB
    and five partitions gives it too."""
    log = tmp_path / "access.log"
    ticks = _poisson_log(log, NGINX_MSEC, 3, seed=2)
    assert 30 < int(np.sum(np.diff(ticks) == 0)) < 120                # ties: ~2.5 % of gaps
    models = []
    for workers in ("1", "2"):
        out = tmp_path / f"model{workers}.json"
        r = CliRunner().invoke(main, ["fit", str(log), "--format", NGINX_MSEC, "-o", str(out),
                                      "--workers", workers, "--json"])
        assert r.exit_code == 0, r.output
        summary = json.loads(r.stdout)
        _check_exponential(summary["variables"]["interarrival"], 0.001)
        assert summary["arrivals"]["poisson"] is True
        models.append({k: v for k, v in json.loads(out.read_text()).items() if k != "created"})
    assert models[0] == models[1]
    one = fit_logs([str(log)], FitOptions(fmt=NGINX_MSEC), runner=LocalRunner(partitions=1))
    cut = fit_logs([str(log)], FitOptions(fmt=NGINX_MSEC),
                   runner=LocalRunner(partitions=5, piece_bytes=30_000))
    assert _model(one) == _model(cut)
    assert _model(one)["variables"] == models[0]["variables"]


def test_a_log_to_the_second_beside_one_to_the_millisecond_is_fitted_on_the_millisecond(tmp_path):
    """Mixed inputs: the finer grid holds both, whichever comes first."""
    seconds, millis = tmp_path / "s.log", tmp_path / "ms.log"
    _poisson_log(millis, NGINX_MSEC, 3)
    seconds.write_text("".join(_line(NGINX_MSEC, 5000 + i, 200 + 7 * i, 0, 0) + "\n"
                               for i in range(50)))
    for paths in ([seconds, millis], [millis, seconds]):
        result = fit_logs([str(p) for p in paths], FitOptions(fmt=NGINX_MSEC))
        assert result.model.data["provenance"]["timestamp_resolution_s"] == 0.001
    assert fit_logs([str(seconds)], FitOptions(fmt=NGINX_MSEC)).sessions.resolution == 1.0


def test_real_nginx_msec_log_is_read_on_its_millisecond_grid(tmp_path):
    """nginx itself logs $msec: 400 clients (X-Forwarded-For) asking one after another, often
    several in one millisecond. The log's resolution is 1 ms, the gaps are cells of it, and
    the arrival check judges them."""
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("<html>hello</html>")
    layout = '$http_x_forwarded_for "$request" $status $body_bytes_sent $msec'
    with nginx(root, tmp_path / "nginx", log_format=layout) as server:
        for i in range(400):
            client = {"X-Forwarded-For": f"10.1.{i // 256}.{i % 256}"}
            with urllib.request.urlopen(urllib.request.Request(server.url, headers=client),
                                        timeout=5) as answer:
                answer.read()
        log = server.workdir / "access.log"
        deadline = time.monotonic() + 5           # nginx logs a request once it has answered
        while len(log.read_text().splitlines()) < 400 and time.monotonic() < deadline:
            time.sleep(0.02)
    result = fit_logs([str(log)], FitOptions(fmt=layout))
    assert result.sessions.resolution == 0.001 and result.sessions.counts["sessions"] == 400
    gaps = result.sessions.samples["interarrival"]
    assert np.array_equal(gaps, np.round(gaps * 1000) / 1000)
    assert result.model.data["variables"]["interarrival"]["observation"]["step"] == 0.001
    assert result.model.arrivals["poisson"] is not None
