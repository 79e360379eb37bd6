"""``wagon sweep``: the capacity curve of a server (the same scenario at increasing rates)."""
from __future__ import annotations

import os

import click

from ..analysis.capacity import (DRAIN_MARGIN, DRAIN_MIN, LATENCY_HEADERS, TABLE_LATENCY,
                                 SweepError, SweepOptions, parse_rates, steps_text, sweep)
from ..formats.classes import ClassError, parse_protocol
from ..formats.scenario import ScenarioError
from ..formats.strict_json import dumps
from ..replay import ReplayError
from . import inputs
from .common import (Count, Finite, Given, WagonError, cannot_play, default, tls_options,
                     write_error)


@click.command("sweep")
@click.argument("scenario")
@click.option("--target", required=True, help="The server: http://HOST:PORT/")
@click.option("--rates", default=",".join(f"{r:g}" for r in default(SweepOptions, "rates")),
              show_default=True,
              help="Rate scales, increasing: each step replays the scenario with its session "
                   "starts divided by the scale.")
@click.option("--step-time", type=Finite(2, 1e6),
              default=default(SweepOptions, "step_time"), show_default=True,
              help="Seconds of arrivals (and of clicks due) per step.")
@click.option("--warmup", type=Finite(0, 1e6), default=default(SweepOptions, "warmup"),
              show_default=True, help="First seconds of a step left out of its throughputs.")
@click.option("--drain", type=Finite(0, 1e6), default=None,
              help="Seconds after a step's end its sessions may take to finish the clicks due "
                   "in it; what still runs then is cut (and counted as cut). Default: "
                   f"calibrated, {DRAIN_MARGIN:g} × the time the first (lightest) step's took "
                   f"(at least {DRAIN_MIN:g} s).")
@click.option("--pause", type=Finite(0, 1e6), default=default(SweepOptions, "pause"),
              show_default=True, help="Seconds between steps (the server drains its queue).")
@click.option("--within", type=Finite(0, 1, min_open=True, max_open=True),
              default=default(SweepOptions, "within"), show_default=True,
              help="The knee is the last step whose achieved throughput is within this fraction "
                   "of the offered one.")
@click.option("--protocol", type=Given(), default=default(SweepOptions, "protocol"),
              help="Override every class' protocol (as wagon replay --protocol).")
@click.option("--no-emulation", is_flag=True, help="No network delay or bandwidth emulation.")
@click.option("--workers", type=Count(1, 4096), default=default(SweepOptions, "workers"),
              show_default=True, help="Replay processes per step.")
@click.option("--latency", type=click.Choice(sorted(LATENCY_HEADERS)), default=TABLE_LATENCY,
              show_default=True,
              help="The table's latency columns: page response time (Kaplan-Meier p50 and p90, "
                   "the pages a step's end cut counted as censored, and how many) or the "
                   "successful requests' p50/p90/p99. --json has both.")
@tls_options
@click.option("--plot", type=Given(), default=None, metavar="PNG",
              help="Write the capacity curve here.")
@click.option("--json", "as_json", is_flag=True, help="Print the sweep as JSON.")
def command(scenario, target, rates, step_time, warmup, drain, pause, within, protocol,
            no_emulation, workers, latency, ca_file, insecure, tls_version, plot,
            as_json) -> None:
    """Replay SCENARIO at increasing rate scales: achieved vs offered throughput, latency and
    errors per step, and the knee where the server stops keeping up."""
    inputs.scenario(scenario)
    if plot and not os.path.isdir(os.path.dirname(plot) or "."):   # found now, not after
        raise WagonError(f"--plot {plot}: no folder {os.path.dirname(plot)}")
    try:
        if protocol:
            parse_protocol(protocol)
        opts = SweepOptions(target, parse_rates(rates), step_time=step_time, warmup=warmup,
                            drain=drain, pause=pause, within=within, protocol=protocol,
                            emulation=not no_emulation, workers=workers, ca_file=ca_file,
                            insecure=insecure, tls_version=tls_version)
        result = sweep(scenario, opts, on_step=None if as_json else lambda s: click.echo(
            f"rate scale {s['rate_scale']:g}: {s['achieved_rps']:,.1f} of "
            f"{s['offered_rps']:,.1f} requests/s", err=True),
            on_note=lambda note: click.echo(f"wagon sweep: {note}", err=True))
    except ClassError as e:
        raise WagonError(f"--protocol: {e}") from None
    except (SweepError, ScenarioError) as e:
        raise WagonError(str(e)) from None
    except ReplayError as e:
        raise cannot_play(e) from None
    if plot:
        from ..report.capacity import plot_capacity  # lazy: matplotlib only for --plot
        try:
            plot_capacity(result, plot)
        except OSError as e:
            raise write_error(plot, e) from None
    click.echo(dumps(result) if as_json else steps_text(result, latency))
