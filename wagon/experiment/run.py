"""Running a recipe: for every cell and repetition, synthesize the cell's workload, start its
server (experiment.servers) on a free loopback port with the cell's configuration, replay the
workload against it while sampling the server's own status, stop the server, measure, and
append a row to the experiment's table.

The run folder holds the recipe as run, ``table.csv`` (a row per cell and repetition, rewritten
whole after each row: an interrupted experiment keeps what it finished), and per run
``cells/cNNN-rK/``: the scenario, the server's configuration and logs, the replay's results
and the status samples. Repetition K of every cell plays the scenario drawn with seed
``seed + K`` (common random numbers: the cells of a repetition differ by their settings only,
not by the luck of the draw); its packet relay, on a packet path, loses packets with the same
seed. ``summary.csv`` holds a row per cell: each measure's mean and 95 % confidence interval
over its repetitions (``experiment.summary``).
"""
from __future__ import annotations

import csv
import io
import math
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..analysis.capacity import scaled_scenario
from ..analysis.pages import page_times, request_percentiles
from ..analysis.selfsim import hurst_report
from ..formats.atomic import atomic_write
from ..formats.classes import ClassError
from ..formats.model import ModelError, load_model
from ..formats.results import ResultsError, measured, pages_path, read_results
from ..formats.site import build_site
from ..replay import ReplayError, ReplayOptions, replay
from ..replay.events import IN_FLIGHT, NOT_STARTED, UNFINISHED
from ..replay.runner import check_network
from ..replay.scheduler import class_override
from ..synth import Generator, SynthError, SynthOptions, synthesize
from ..synth.reference import wagon_model
from .closed import clicks_needed, closed_loop
from .recipe import Cell, Recipe, RecipeError
from .servers import has_placeholder, start
from .status import StatusSampler
from .summary import stopped_early, summarise

__all__ = ["run_experiment", "check_cells", "generator", "Run", "Interrupted", "LAG_FLAG_MS"]


class Interrupted(Exception):
    """A signal stopped a run: its row is in the table, marked ``stopped_by`` signal, and no
    later run is played."""

#: a cell whose sessions started later than this at the 99th percentile is flagged: its
#: response times include the generator's own delay (Hashemian et al.); so is one whose
#: packet relay put out its packets later than this at the 99th percentile (a path's delay
#: grown by the relay's own, every client's)
LAG_FLAG_MS = 10.0
#: ``stopped_by`` of a run whose results file has a row the format refuses (``read_results``'s
#: one line in ``stopped_why``): the run is in the table without the measures read from it
RESULTS_REFUSED = "results_refused"
#: seconds between status samples, and the longest a status page may take (on loopback it
#: takes about a millisecond; an Apache that keeps it waiting has no worker free)
STATUS_EVERY = 0.25
STATUS_TIMEOUT = 1.0


@dataclass
class Run:
    """One cell played once: where its files are, the seed of its workload."""

    cell: Cell
    repetition: int
    seed: int
    folder: Path


def run_experiment(recipe: Recipe, out: Path, on_row: Callable[[dict], None] | None = None,
                   only: set[int] | None = None) -> list[dict]:
    """Play every cell of ``recipe`` (or the cells ``only`` lists) its repetitions times into
    the run folder ``out``; returns the table's rows (``on_row`` sees each as it comes)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(recipe.path, out / "recipe.toml")
    rows: list[dict] = []
    sites: dict[tuple, Path] = {}
    for cell in recipe.cells(only):
        e = cell.settings["experiment"]     # an axis may set the seed or the pause
        for rep in range(e["repetitions"]):
            if rows:
                time.sleep(e["pause"])
            run = Run(cell, rep, e["seed"] + rep, out / "cells" / f"c{cell.index:03d}-r{rep}")
            rows.append(play(recipe, run, sites, out))
            write_table(rows, out / "table.csv")
            write_table(summarise(rows, list(recipe.axes)), out / "summary.csv")
            if on_row is not None:
                on_row(rows[-1])
            if rows[-1]["stopped_by"] == "signal":
                raise Interrupted(f"stopped by a signal in cell {cell.index}, repetition "
                                  f"{rep}: {len(rows)} runs in {out / 'table.csv'}")
    return rows


def generator(recipe: Recipe, settings: dict, seed: int) -> Generator:
    """The synthesis of a cell's workload (``wagon synth``'s generator): WAGON's own laws or the
    recipe's model file; a closed loop's N users, else the arrivals of the run's duration."""
    w, e = settings["workload"], settings["experiment"]
    model = wagon_model(w["rate"]) if w["model"] == "wagon" else load_model(
        recipe.resolve(w["model"]))
    common = dict(rate=w["rate"], classes=w["classes"], seed=seed, pages=w["pages"],
                  speedup=w["speedup"])
    if w["users"]:
        return Generator(model, SynthOptions(sessions=w["users"], **common))
    return Generator(model, SynthOptions(
        duration=e["duration"], arrivals=w["arrivals"], deterministic=w["deterministic"],
        steady=w["steady"], **common))


def check_cells(recipe: Recipe, only: set[int] | None = None) -> None:
    """RecipeError (one line, naming the cell) for a cell whose workload ``wagon synth`` would
    refuse, or whose protocol ``wagon replay`` would: before anything starts."""
    for cell in recipe.cells(only):
        try:
            h2 = http2_of(generator(recipe, cell.settings, 0), cell.settings["replay"])
        except (SynthError, ClassError, ModelError) as e:
            raise RecipeError(f"{recipe.path}: cell {cell.index} ({cell.label}): {e}") from None
        kind = cell.settings["server"]["kind"]
        if h2 and (kind != "nginx" or h2 != "all"):
            raise RecipeError(f"{recipe.path}: cell {cell.index} ({cell.label}): HTTP/2 in plain "
                              "text (h2c) is served by nginx alone, to h2 browsers alone (its "
                              "port then speaks nothing else)")
        w, e, r = (cell.settings[t] for t in ("workload", "experiment", "replay"))
        span = e["duration"] / w["speedup"]
        if r["warmup"] >= span:
            raise RecipeError(f"{recipe.path}: cell {cell.index} ({cell.label}): replay.warmup "
                              f"{r['warmup']:g} s leaves nothing of the {span:g} s of arrivals "
                              "to measure")
        try:
            check_network(replay_options(cell.settings, "http://127.0.0.1/", None))
        except ReplayError as err:
            raise RecipeError(f"{recipe.path}: cell {cell.index} ({cell.label}): {err}") \
                from None
        template = cell.settings["server"]["template"]
        if template and not recipe.resolve(template).is_file():
            raise RecipeError(f"{recipe.path}: cell {cell.index} ({cell.label}): "
                              f"server.template {recipe.resolve(template)}: not a file")
        if h2 and template and not has_placeholder(recipe.resolve(template), "http2"):
            raise RecipeError(f"{recipe.path}: cell {cell.index} ({cell.label}): {template} has "
                              "no {{ http2 }} (on its listen line: listen 127.0.0.1:{{ port }}"
                              "{{ http2 }};): its nginx would not speak HTTP/2 to the h2 "
                              "browsers")


def http2_of(gen: Generator, replay_settings: dict) -> str | None:
    """Do the cell's browsers speak HTTP/2: "all", "some", or None (its classes, or the
    replay's protocol over them)."""
    played = class_override(gen.classes, replay_settings["protocol"] or None)
    h2 = [c.protocol.http2 for c in played]
    return ("all" if all(h2) else "some") if any(h2) else None


def replay_options(settings: dict, target: str, results: str | None, seed: int = 0
                   ) -> ReplayOptions:
    """How a cell (its ``settings``) replays its workload against ``target``: until the
    arrivals' end and the drain after them; ``seed``: the packet relay's losses (the run's)."""
    r, e = settings["replay"], settings["experiment"]
    return ReplayOptions(target=target, results=results, workers=r["workers"],
                         protocol=r["protocol"] or None, emulation=r["emulation"],
                         network=r["network"], loss=r["loss"], seed=seed,
                         warmup=r["warmup"], connect_timeout=r["connect_timeout"], fail_on=(),
                         max_time=e["duration"] / settings["workload"]["speedup"] + e["drain"])


def play(recipe: Recipe, run: Run, sites: dict[tuple, Path], out: Path) -> dict:
    """Synthesize, serve, replay and measure one run of a cell: its row of the table."""
    s = run.cell.settings
    w, e, r, srv = s["workload"], s["experiment"], s["replay"], s["server"]
    run.folder.mkdir(parents=True, exist_ok=True)
    gen = generator(recipe, s, run.seed)
    scenario, drawn = run.folder / "scenario.jsonl", run.folder / "drawn.jsonl"
    span = e["duration"] / w["speedup"]
    with atomic_write(drawn) as f:
        synthesize(gen, f, w["model"])
    if w["users"]:                        # closed loop: its users' pages, back to back
        closed_loop(drawn, clicks_needed(gen.played_classes(), span + e["drain"]),
                    scenario)
        due = None
    else:                                 # the clicks due in the run's seconds, no later one
        due = scaled_scenario(str(drawn), 1.0, span, r["warmup"], str(scenario)).offered
    drawn.unlink()
    once = gen.site.once
    key = (w["model"], w["pages"], once.copies if once is not None else 0)
    if key not in sites:                  # the site depends on the model, its page count and
        sites[key] = out / "sites" / f"site-{len(sites)}"    # the run's one-timer copies
        build_site(gen.site.spec, sites[key])
    params = {k: v for k, v in srv.items() if k not in ("kind", "template")}
    template = recipe.resolve(srv["template"]) if srv["template"] else None
    with start(srv["kind"], params, sites[key], run.folder / "server", template=template,
               http2=http2_of(gen, r) is not None) as server:
        server.timeout = STATUS_TIMEOUT
        with StatusSampler(server, every=STATUS_EVERY, port=server.port,
                           pid=server.pid) as sampler:
            summary = replay(str(scenario), replace(
                replay_options(s, server.url, str(run.folder / "results.csv"), run.seed),
                topology=str(recipe.resolve(r["topology"])) if r["topology"] else None,
                topology_links=run.cell.topology_links))
        sampler.write_csv(run.folder / "status.csv")
        status = sampler.summary(server.capacity)
        logged = _lines(server.access_log)
    row = {"experiment": recipe.name, "cell": run.cell.index, "repetition": run.repetition,
           "seed": run.seed, **run.cell.axes, "server": srv["kind"]}
    row.update(measure(run.folder / "results.csv", summary, status, logged,
                       e["measures"], e["hurst_bin"], (r["warmup"], span), due))
    return row


def _lines(path: Path) -> int | None:
    """Lines of the server's access log (the requests it logged), None if it has none."""
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def measure(results: Path, summary: dict, status: dict, logged: int | None,
            groups: list[str], hurst_bin: float, window: tuple[float, float],
            due: int | None) -> dict[str, Any]:
    """A run's measures (``groups``: recipe.MEASURE_GROUPS) from its results, the replay's
    summary, the server's status samples and the requests its access log counts; ``window``:
    the arrivals' seconds measured, [warmup, end of the arrivals) — the drain after them lets
    pages finish but is not a second of load; ``due``: the requests the schedule has due in
    the window (None: a closed loop, which offers only what is served)."""
    row: dict[str, Any] = {"duration_s": summary["duration_s"],
                           "sessions": summary["sessions"]["started"],
                           "stopped_by": summary.get("stopped_by", ""),
                           "stopped_why": "; ".join(f"{p['name']} lost: {p['cause']}" for p in
                                                    summary.get("dead_processes", []))}
    try:
        req, pages = _results(results, "pages" in groups)
    except ResultsError as err:   # a row the format refuses: this run's row says which (a
        if not stopped_early(row):  # stop of its own, a signal, a lost relay, stays), and the
            row["stopped_by"] = RESULTS_REFUSED                     # cells go on
        row["stopped_why"] = "; ".join(filter(None, (row["stopped_why"], str(err))))
        groups = [g for g in groups if g in ("server", "generator")]
    if "pages" in groups:
        row.update(_flat("page_", page_times(pages, summary["duration_s"], req).summary()))
    if "requests" in groups:
        ok = req[req["error"] == ""]
        lo, hi = window
        row.update({"requests_sent": int((req["error"] != NOT_STARTED).sum()),
                    "requests_ok": len(ok),
                    "requests_failed": int((~req["error"].isin(("", *UNFINISHED))).sum()),
                    "requests_cut": int((req["error"] == IN_FLIGHT).sum()),
                    "requests_not_started": int((req["error"] == NOT_STARTED).sum()),
                    "offered_rps": None if due is None else due / (hi - lo),
                    "served_rps": int(ok["last_byte"].between(lo, hi, "left").sum()) / (hi - lo),
                    **{f"request_{k}_ms": v for k, v in request_percentiles(req).items()}})
    if "server" in groups:
        row["server_logged_requests"] = logged
        row.update({f"server_{k}": v for k, v in status.items()})
    if "generator" in groups:
        row.update(generator_columns(summary))
    if "hurst" in groups:
        row.update(hurst(req["start"].dropna().to_numpy(), hurst_bin, window))
    return row


def _results(results: Path, pages: bool) -> tuple[Any, Any]:
    """The run's requests and (``pages``) pages in its measured window; ResultsError when a
    file or a row of it is refused."""
    req = read_results(results)
    run_file = req.attrs["run"]
    req = req[measured(req, run_file)]
    if not pages:
        return req, None
    page_rows = read_results(pages_path(results))
    return req, page_rows[measured(page_rows, run_file)]


def path_columns(network: dict | None) -> dict[str, Any]:
    """What the packet path did (``--network packet``; {} otherwise): packets relayed, the
    measured loss rate (packets the relay dropped at random over those it took: relayed,
    lost, dropped by a full queue), queue drops, the relay's lag p99 and max (ms) and CPU
    seconds; None each when the relay's counts were lost with it."""
    if not network:
        return {}
    relay = network.get("relay") or {}
    taken = sum(relay.get(k, 0) for k in ("packets", "lost", "queue_drops"))
    return {"path_packets": relay.get("packets"),
            "path_loss_rate": relay["lost"] / taken if taken else None,
            "path_queue_drops": relay.get("queue_drops"),
            "relay_lag_p99_ms": relay.get("lag_p99_ms"),
            "relay_lag_max_ms": relay.get("lag_max_ms"),
            "relay_cpu_s": relay.get("cpu_s")}


def generator_columns(summary: dict) -> dict[str, Any]:
    """The generator's health: its sessions' start lag and loop lag (p99, ms), CPU, the packet
    path's figures (``path_columns``), and ``generator_lagged``: the replay warned, or the
    start lag or the relay's lag p99 is over LAG_FLAG_MS (``generator_warning`` says which)."""
    g = summary["generator"]
    path = path_columns(summary.get("network"))
    why = list(summary["warnings"])            # the replay's own name the start lag
    for name, lag in (("sessions' start lag", None if why else g["start_lag"]["p99"]),
                      ("packet relay's lag", path.get("relay_lag_p99_ms"))):
        if (lag or 0) > LAG_FLAG_MS:
            why.append(f"the {name} p99 {lag:.1f} ms is over {LAG_FLAG_MS:g} ms")
    return {"generator_start_lag_p99_ms": g["start_lag"]["p99"],
            "generator_loop_lag_p99_ms": g["loop_lag"]["p99"], "generator_cpu": g["cpu"],
            **path, "generator_lagged": bool(why), "generator_warning": "; ".join(why)}


def _flat(prefix: str, summary: dict) -> dict[str, Any]:
    """A summary's columns: nested figures named after their parent (``finished_s``'s p50 →
    ``page_finished_p50_s``, ``html_latency_s``'s mean → ``page_html_latency_mean_s``)."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if not isinstance(value, dict):
            out[prefix + key] = value
            continue
        stem, unit = (key[:-2], "_s") if key.endswith("_s") else (key, "")
        for sub, x in value.items():
            out[f"{prefix}{stem}_{sub}" + (unit if sub != "pages" else "")] = x
    return out


def hurst(starts: np.ndarray, width: float, window: tuple[float, float]) -> dict[str, Any]:
    """Hurst estimates of the request-count series (requests issued per ``width`` seconds over
    the run's measured arrivals, [warmup, end of the arrivals)): WAGON's Fig. 12 measure."""
    lo, hi = window
    inside = starts[(starts >= lo) & (starts < hi)] - lo
    counts = np.bincount((inside // width).astype(np.int64),
                         minlength=int(math.ceil((hi - lo) / width)))
    try:
        estimates, notes = hurst_report(counts)
    except ValueError as err:
        return {"hurst_note": str(err)}
    return {**{f"hurst_{x.estimator}": x.H for x in estimates}, "hurst_bins": len(counts),
            "hurst_note": " ".join(notes)}


def write_table(rows: list[dict], path: Path) -> None:
    """The table as CSV (columns in order of first appearance; empty: not measured), whole."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, columns, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell_text(v) for k, v in row.items()})
    with atomic_write(path) as f:
        f.write(buf.getvalue())


def _cell_text(v: Any) -> str:
    if v is None or isinstance(v, float) and math.isnan(v):
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)
