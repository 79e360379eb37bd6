"""``wagon demo``: the whole pipeline on the bundled sample."""
from __future__ import annotations

import sys

import click

from ..demo import DemoError, DemoOptions, run_demo
from .common import Finite, Given, SEED, WagonError, default


@click.command("demo")
@click.option("--outdir", type=Given(), default=default(DemoOptions, "outdir"), show_default=True,
              help="Where the model, scenario, results, plots and report go.")
@click.option("--duration", type=Finite(0, 1e7, min_open=True),
              default=default(DemoOptions, "duration"),
              show_default=True, help="Modeled seconds of session arrivals.")
@click.option("--speedup", type=Finite(1e-3, 1e6), default=default(DemoOptions, "speedup"),
              show_default=True, help="Play the whole world this much faster (times divided, networks sped up).")
@click.option("--rate-scale", type=Finite(1e-6, 1e6), default=default(DemoOptions, "rate_scale"),
              show_default=True, help="Multiply the logged session rate.")
@click.option("--seed", type=SEED, default=default(DemoOptions, "seed"), show_default=True,
              help="Seed of the synthesis.")
@click.option("--drain", type=Finite(0, 1e6),
              default=default(DemoOptions, "drain"), show_default=True,
              help="Seconds the replay may run after the last session arrived.")
def command(outdir, duration, speedup, rate_scale, seed, drain) -> None:
    """Fit the bundled log, synthesize, serve, replay, report: the whole pipeline."""
    try:
        run_demo(DemoOptions(outdir, duration, speedup, rate_scale, seed, drain), echo=click.echo,
                 progress=sys.stderr.isatty())
    except DemoError as e:
        raise WagonError(str(e)) from None
