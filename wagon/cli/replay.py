"""``wagon replay``: a scenario against a server (imports no SciPy: see wagon.replay)."""
from __future__ import annotations

import sys

import click

from ..formats.classes import ClassError, parse_protocol
from ..formats.scenario import ScenarioError, read_scenario
from ..formats.strict_json import dumps
from ..replay import ReplayError, ReplayOptions, replay
from ..replay.record import summary_text
from ..replay.runner import estimate_connections, raise_nofile
from .common import WagonError, default

PROTOCOLS = "http10xK, http11, http11xK, pipeline or early-close"


@click.command("replay")
@click.argument("scenario")
@click.option("--target", required=True, help="The server: http://HOST:PORT/")
@click.option("--results", default=default(ReplayOptions, "results"), metavar="FILE",
              help="CSV of every request (and FILE's .pages.csv of every page, .run.json of "
                   "the run).")
@click.option("--workers", type=int, default=default(ReplayOptions, "workers"), show_default=True,
              help="Processes sharing the sessions (one per core).")
@click.option("--protocol", default=None, help=f"Override every class' protocol: {PROTOCOLS}.")
@click.option("--no-emulation", is_flag=True, help="No network delay or bandwidth emulation.")
@click.option("--connect-timeout", type=float, default=default(ReplayOptions, "connect_timeout"),
              show_default=True, help="Seconds to wait for a TCP connection.")
@click.option("--timeout", type=float, default=default(ReplayOptions, "timeout"),
              show_default=True, help="Seconds to wait for a response.")
@click.option("--max-time", type=float, default=default(ReplayOptions, "max_time"),
              help="Stop after this many seconds.")
@click.option("--progress/--no-progress", default=None,
              help="Progress line on stderr (default: when stderr is a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def command(scenario, target, results, workers, protocol, no_emulation, connect_timeout,
            timeout, max_time, progress, as_json) -> None:
    """Play SCENARIO against the server at --target and report what clients saw."""
    try:
        proto = parse_protocol(protocol) if protocol else None
        sc = read_scenario(scenario)
        limit = raise_nofile()
        need = estimate_connections(sc, proto)
    except ClassError as e:
        raise WagonError(f"--protocol: {e}") from None
    except ScenarioError as e:
        raise WagonError(str(e)) from None
    if need > limit * max(workers, 1):
        click.echo(f"wagon: this run would hold about {need:,} connections at its peak; the "
                   f"open-files limit is {limit:,} per process: expect 'too_many_open_files' "
                   "errors (use --workers, or raise the hard limit)", err=True)
    opts = ReplayOptions(target=target, results=results, workers=workers, protocol=protocol,
                         emulation=not no_emulation, connect_timeout=connect_timeout,
                         timeout=timeout, max_time=max_time,
                         progress=sys.stderr.isatty() if progress is None else progress)
    try:
        summary = replay(scenario, opts)
    except (ReplayError, ScenarioError) as e:
        raise WagonError(str(e)) from None
    except OSError as e:
        raise WagonError(f"cannot write results: {e.strerror or e}") from None
    click.echo(dumps(summary) if as_json else summary_text(summary))
