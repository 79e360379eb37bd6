"""``wagon fit``: logs → model."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from ..cluster import ClusterError, parse_cluster, shippable
from ..formats.strict_json import dumps
from ..logs.parse import LogError
from ..logs.sessions import SessionRules
from ..modeling import FitOptions, fit_logs
from ..modeling.allocator import keep_freed_memory
from ..modeling.processes import ProcessRunner, WorkerError, can_fork, usable_cores
from .common import (SEED, Count, Finite, Given, WagonError, cluster_client, default, not_wagon,
                     write_error)

if TYPE_CHECKING:
    from ..modeling import FitResult

PROGRESS_MIN_BYTES = 64 << 20          # decompressed input: about two seconds of parsing
_LABELS = {"parse": "parsing", "sessionize": "sessions", "fit": "fitting",
           "bootstrap": "bootstrap"}


class _Progress:
    """``progress(stage, done, total)`` on stderr for inputs of at least PROGRESS_MIN_BYTES
    decompressed bytes: a click bar per stage on a terminal, otherwise a line each tenth."""

    def __init__(self) -> None:
        self.show: bool | None = None
        self.stage: str | None = None
        self.bar = None
        self.tenth = -1

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.show is None:
            self.show = stage != "parse" or total >= PROGRESS_MIN_BYTES
        if not self.show:
            return
        label = _LABELS.get(stage, stage)
        if stage != self.stage:
            self.close()
            self.stage, self.tenth = stage, -1
            if sys.stderr.isatty():
                self.bar = click.progressbar(length=total, label=label, file=sys.stderr)
                self.bar.__enter__()
        if self.bar is not None:
            self.bar.length = max(self.bar.length or 0, total)
            self.bar.update(done - self.bar.pos)
        elif done * 10 // max(total, 1) > self.tenth:
            self.tenth = done * 10 // max(total, 1)
            click.echo(f"wagon: {label} {100 * done // max(total, 1)}% ({done:,}/{total:,})",
                       err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _fit(logs, options: FitOptions, progress: _Progress, cluster: str | None,
         workers: int) -> FitResult:
    """``fit_logs`` in this process, on ``workers`` processes of this machine, or on the Dask
    cluster ``cluster``."""
    if cluster is None:
        return fit_logs(logs, options, progress,
                        ProcessRunner(workers) if workers > 1 else None)
    spec = parse_cluster(cluster)
    shippable(list(logs))
    from ..modeling.dask_runner import DaskRunner  # lazy: Dask is optional, only for --cluster
    with cluster_client(spec) as client:
        return fit_logs(logs, options, progress, DaskRunner(client))


@click.command("fit")
@click.argument("logs", nargs=-1, required=True)
@click.option("-o", "--output", default="model.json", show_default=True,
              help="Where to write the model.")
@click.option("--format", "fmt", default=default(FitOptions, "fmt"), show_default=True,
              help="auto; a named layout (combined, common, w3c, cloudfront, awsalb, awselb, "
                   "awss3, squid, haproxy, traefik-clf, nginx-json, caddy, ...: "
                   "docs/formats.md); an Apache LogFormat or an nginx log_format string.")
@click.option("--client", type=click.Choice(["host", "forwarded"]),
              default=default(FitOptions, "client"), show_default=True,
              help="The client's address: the connection's, or the first X-Forwarded-For one.")
@click.option("--identity", type=click.Choice(["host", "host+agent"]),
              default=default(SessionRules, "identity"), show_default=True,
              help="What identifies a client: its address and user agent, or its address.")
@click.option("--tmin", type=Finite(0, 1e9),
              default=default(SessionRules, "tmin"), show_default=True,
              help="Requests closer than this (s) belong to the same click.")
@click.option("--tmax", type=Finite(0, 1e9, min_open=True),
              default=default(SessionRules, "tmax"), show_default=True,
              help="An idle time above this (s) ends the session.")
@click.option("--timeout", type=Finite(0, 1e9, min_open=True),
              default=default(SessionRules, "timeout"),
              help="Also cut a session once it has lasted this long (s).")
@click.option("--embed-window", type=Finite(0, 1e9), default=default(SessionRules, "embed_window"),
              help="Make an object that comes this long (s) after the previous request a click "
                   "(off: an object belongs to the page before it however late).")
@click.option("--robots", default=default(SessionRules, "robots"), metavar="FILE|PATTERN",
              help="Robot user agents: a file of patterns or one pattern (replaces the "
                   "built-in list).")
@click.option("--keep-robots", is_flag=True, help="Keep robots (excluded by default).")
@click.option("--keep-query", is_flag=True, help="Keep query strings in URLs.")
@click.option("--keep-paths", is_flag=True,
              help="Keep identifiers in URL paths (collapsed into templates by default).")
@click.option("--max-pages", type=Count(), default=default(FitOptions, "max_pages"),
              show_default=True,
              help="Pages the model keeps; the others are folded into a remainder.")
@click.option("--base-month", default=None, metavar="YYYY-MM",
              help="Month and year for logs whose timestamps lack them (EPA).")
@click.option("--bootstrap", type=Count(0, 10**6), default=default(FitOptions, "bootstrap"),
              show_default=True,
              help="Parametric bootstrap replicates for p-values and percentile intervals "
                   "(0: off).")
@click.option("--intervals", type=click.Choice(["best", "all"]),
              default=default(FitOptions, "intervals"), show_default=True,
              help="Whose parameters get standard errors and 95 % intervals: the chosen law's "
                   "or every candidate's (all: with --bootstrap).")
@click.option("--seed", type=SEED, default=default(FitOptions, "seed"), show_default=True,
              help="Seed of the bootstrap and of the spreading of whole-second starts.")
@click.option("--plots", "plots_dir", type=Given(), default=None, metavar="DIR",
              help="Write a CDF + QQ plot per variable here.")
@click.option("--workers", type=Count(1, 4096), default=None,
              help="Processes of this machine that run the stages (1: this process alone); "
                   "default: one per usable core.")
@click.option("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
              help="Run the stages on Dask workers instead: N local worker processes, or the "
                   "workers of a running scheduler (which must see the LOGS at the same "
                   "paths).")
@click.option("--speedup", type=Finite(0, 1e6, min_open=True),
              default=default(FitOptions, "speedup"), show_default=True,
              help="The LOGS were written by a server during a replay at this --speedup: every "
                   "time is multiplied by it, so the rules, laws and grid are in the "
                   "scenario's seconds (docs/fidelity.md).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def command(logs, output, fmt, client, identity, tmin, tmax, timeout, embed_window, robots,
            keep_robots, keep_query, keep_paths, max_pages, base_month, bootstrap, intervals,
            seed, plots_dir, workers, cluster, speedup, as_json) -> None:
    """Fit a traffic model to access LOGS (plain, .gz, .bz2, .xz, .zst; '-' for stdin)."""
    try:
        rules = SessionRules(tmin=tmin, tmax=tmax, timeout=timeout, embed_window=embed_window,
                             identity=identity, keep_robots=keep_robots, robots=robots)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    options = FitOptions(fmt=fmt, keep_query=keep_query, base_month=base_month, rules=rules,
                         bootstrap=bootstrap, seed=seed, client=client, keep_paths=keep_paths,
                         max_pages=max_pages, intervals=intervals, speedup=speedup)
    if workers is not None and cluster is not None:
        raise click.UsageError("give --workers or --cluster, not both")
    if workers is None:
        workers = usable_cores() if can_fork() else 1
    elif workers > 1 and not can_fork():
        raise click.BadParameter("worker processes need fork(), which this system lacks",
                                 param_hint="--workers")
    not_wagon(logs, "an access log")
    keep_freed_memory()                  # this process and the workers it forks
    progress = _Progress()
    try:
        result = _fit(logs, options, progress, cluster, workers)
    except (LogError, ClusterError, WorkerError) as e:
        raise WagonError(str(e)) from None
    finally:
        progress.close()
    if result.sessions.counts["sessions"] == 0:
        raise WagonError(f"no session left to model: {result.clients_text()}"
                         + ("; --keep-robots keeps robots" if result.sessions.counts[
                             "robot_clients"] else ""))
    from ..formats.model import save_model  # lazy: SciPy's laws, loaded while the logs parse
    try:
        save_model(result.model, output)
    except OSError as e:
        raise write_error(output, e) from None
    plots = []
    if plots_dir:
        from ..report.plots import write_plots  # lazy: matplotlib costs ~0.5 s at start-up
        try:
            plots = [str(p) for p in write_plots(result.fits, result.sessions.samples, plots_dir)]
        except OSError as e:
            raise write_error(f"plots under {plots_dir}", e) from None
    if as_json:
        click.echo(dumps(result.summary_json(output, plots)))
    else:
        click.echo(result.summary_text(output, plots))
    for name, line, reason, text in result.stats.examples:
        click.echo(f"wagon: skipped {os.path.basename(name)}:{line} ({reason}): {text}", err=True)
    for name, line, cause, text in result.stats.left_out:
        click.echo(f"wagon: left out {os.path.basename(name)}:{line} ({cause}): {text}", err=True)
