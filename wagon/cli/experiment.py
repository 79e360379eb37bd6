"""``wagon experiment``: a recipe's cells played against the servers it starts, one table."""
from __future__ import annotations

import math
from pathlib import Path

import click

from ..experiment.recipe import RecipeError, locate, read_recipe, set_repetitions
from ..experiment.servers import ServerError
from .common import Interrupted as CliInterrupted
from .common import WagonError, cannot_play, write_error


def _cells(text: str | None, n: int) -> set[int] | None:
    """``--cells 0,3-5`` → {0, 3, 4, 5}, each below ``n``."""
    if text is None:
        return None
    out: set[int] = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise WagonError(f"--cells {text!r}: give cell numbers and ranges, as 0,3-5") from None
    if not out or max(out) >= n or min(out) < 0:
        raise WagonError(f"--cells {text!r}: the recipe's cells are 0 to {n - 1}")
    return out


def plan_text(recipe, only: set[int] | None) -> str:
    """The cells a run plays and the time it takes at most."""
    reps = recipe.tables["experiment"]["repetitions"]
    cells = recipe.cells(only)
    runs = len(cells) * reps
    each = [c.settings["experiment"] for c in cells]     # an axis may set seed and pause
    most = reps * sum(e["duration"] / c.settings["workload"]["speedup"] + e["drain"]
                      + e["pause"] for c, e in zip(cells, each))
    seeds = ", ".join(dict.fromkeys(f"{e['seed']}–{e['seed'] + reps - 1}" for e in each))
    lines = [f"{recipe.name}: {len(cells)} cells × {reps} repetitions = {runs} runs, at most "
             f"{math.ceil(most):,} s (seeds {seeds})"]
    lines += [f"  cell {c.index}: {c.label}" for c in cells]
    return "\n".join(lines)


def _text(v, fmt: str) -> str:
    """A table value as shown: "-" when not measured, yes/no for a flag."""
    if v is None or isinstance(v, float) and math.isnan(v):
        return "-"
    return "yes" if v is True else "no" if v is False else format(v, fmt)


def row_text(row: dict) -> str:
    """One run's line: the page response time (censored), requests, server, generator."""
    def num(key: str, fmt: str) -> str:
        return _text(row.get(key), fmt)
    from ..experiment.summary import stopped_early  # lazy: SciPy (loaded by then)
    flag = "  GENERATOR LAGGED" if row.get("generator_lagged") else ""
    if stopped_early(row):
        why = row.get("stopped_why")
        flag += f"  STOPPED ({row['stopped_by']}" + (f": {why})" if why else ")")
    return (f"cell {row['cell']} rep {row['repetition']}: pages {num('page_finished', 'd')} "
            f"done, {num('page_cut', 'd')} cut; page time mean {num('page_mean_with_cut_s', '.2f')}"
            f" s (done only {num('page_mean_finished_s', '.2f')}), KM median "
            f"{num('page_km_median_s', '.2f')} s; requests p50 {num('request_p50_ms', '.0f')} ms;"
            f" server busy {num('server_busy_mean', '.1f')}{flag}")


#: the table's columns the console shows after a run (all are in table.csv)
SHOWN = (("page_mean_with_cut_s", "page s", ".2f"), ("page_km_median_s", "KM med s", ".2f"),
         ("page_cut", "cut", "d"), ("request_p50_ms", "req p50 ms", ".0f"),
         ("offered_rps", "offered/s", ".1f"), ("served_rps", "served/s", ".1f"),
         ("server_busy_mean", "busy", ".1f"), ("server_connections_mean", "sockets", ".1f"),
         ("server_listen_drops_delta", "SYN drops", "d"),
         ("server_machine_cpu_busy", "cpu", ".2f"),
         ("path_loss_rate", "loss", ".3f"), ("relay_lag_p99_ms", "relay p99 ms", ".1f"),
         ("generator_lagged", "lagged", ""))


def _aligned(head: list[str], body: list[list[str]]) -> str:
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    return "\n".join("  ".join(x.rjust(w) for x, w in zip(line, widths))
                     for line in (head, *body))


def table_text(rows: list[dict], axes: list[str]) -> str:
    """The runs as an aligned table: the axes, then the SHOWN measures a run has."""
    shown = [c for c in SHOWN if any(c[0] in r for r in rows)]
    head = ["cell", "rep", *axes, *(label for _, label, _ in shown)]
    body = [[str(r["cell"]), str(r["repetition"]), *(str(r[a]) for a in axes),
             *(_text(r.get(k), fmt) for k, _, fmt in shown)] for r in rows]
    return _aligned(head, body)


def _interval_text(s: dict, key: str, fmt: str) -> str:
    """A summary's mean with its interval, as 0.52 [0.50, 0.54] (the mean alone for one run;
    a count's to a tenth)."""
    mean, lo, hi = (s.get(f"{key}_{k}") for k in ("mean", "lo", "hi"))
    fmt = ".1f" if fmt == "d" else fmt
    if _text(lo, fmt) == "-":
        return _text(mean, fmt)
    return f"{_text(mean, fmt)} [{_text(lo, fmt)}, {_text(hi, fmt)}]"


def summary_text(summaries: list[dict], axes: list[str]) -> str:
    """Per cell, the numeric SHOWN measures' means and 95 % intervals, the runs lagged."""
    shown = [c for c in SHOWN if c[2] and any(f"{c[0]}_mean" in s for s in summaries)]
    head = ["cell", "runs", *axes, *(label for _, label, _ in shown), "lagged"]
    body = [[str(s["cell"]), str(s["repetitions"]), *(str(s[a]) for a in axes),
             *(_interval_text(s, k, fmt) for k, _, fmt in shown), str(s["lagged"])]
            for s in summaries]
    return _aligned(head, body)


@click.command("experiment")
@click.argument("recipe")
@click.option("--out", default=None, metavar="DIR",
              help="The run folder (default: the recipe's name, in this directory).")
@click.option("--cells", "cells_text", default=None, metavar="LIST",
              help="Play only these cells (as 0,3-5; --dry-run lists them).")
@click.option("--repetitions", type=click.IntRange(1, 1000), default=None, metavar="N",
              help="Play every cell N times, 1 to 1,000 (default: the recipe's repetitions, "
                   "else 3).")
@click.option("--dry-run", is_flag=True, help="List the cells and the time they take; play none.")
@click.option("--quiet", is_flag=True, help="No line per run on stderr.")
def command(recipe, out, cells_text, repetitions, dry_run, quiet) -> None:
    """Play RECIPE (TOML): per cell of its axes and per repetition, start its server with the
    cell's configuration, replay the cell's workload, sample the server's status, stop it;
    write a table with a row per run (table.csv), a row per cell with each measure's mean and
    95 % interval (summary.csv) and the recipe's plots. docs/experiments.md."""
    try:
        r = read_recipe(locate(recipe))
        if repetitions is not None:
            set_repetitions(r, repetitions)
    except RecipeError as e:
        raise WagonError(str(e)) from None
    only = _cells(cells_text, len(r.cells()))
    from ..experiment.run import Interrupted, check_cells, run_experiment  # lazy: SciPy
    from ..replay import ReplayError  # lazy: the replay engine, not for --help
    try:
        check_cells(r, only)
    except RecipeError as e:
        raise WagonError(str(e)) from None
    click.echo(plan_text(r, only), err=not dry_run)
    if dry_run:
        return
    folder = Path(out) if out else Path(r.name)
    try:
        rows = run_experiment(r, folder, None if quiet else
                              lambda row: click.echo(row_text(row), err=True), only)
    except ServerError as e:
        raise WagonError(str(e)) from None
    except ReplayError as e:
        raise cannot_play(e) from None
    except Interrupted as e:
        raise CliInterrupted(str(e)) from None      # as wagon replay's unplanned cut
    except OSError as e:
        raise write_error(str(folder), e) from None
    if r.plots:
        from ..report.experiment import plot_table  # lazy: matplotlib only for plots
        paths, skipped = plot_table(rows, r.plots, folder, r.tables["experiment"]["title"])
        for path in paths:
            click.echo(f"plot: {path}", err=True)
        for why in skipped:
            click.echo(f"wagon: {why} (its columns: table.csv's header)", err=True)
    click.echo(table_text(rows, list(r.axes)))
    from ..experiment.summary import differences, stopped_early, summarise  # lazy: SciPy
    summaries = summarise(rows, list(r.axes))
    click.echo("\nper cell: mean [95 % interval, Student t]\n" + summary_text(summaries,
                                                                          list(r.axes)))
    for line in differences(summaries, [k for k, _, fmt in SHOWN if fmt]):
        click.echo(line)
    lagged = sum(bool(row.get("generator_lagged")) for row in rows)
    stopped = sum(stopped_early(row) for row in rows)
    click.echo(f"{len(rows)} runs; table: {folder / 'table.csv'}, per cell: "
               f"{folder / 'summary.csv'}" + (
        f"; {lagged} lagged: the generator, not only the server, slowed them (its warning is "
        "in the table)" if lagged else "") + (
        f"; {stopped} stopped early (why: the table's stopped_by and stopped_why)"
        if stopped else ""))
