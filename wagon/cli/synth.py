"""``wagon synth``: model → scenario."""
from __future__ import annotations

import math
import os
import shutil
import sys
from typing import TYPE_CHECKING

import click

from ..formats.atomic import atomic_write
from ..formats.classes import ClassError
from ..formats.strict_json import dumps
from ..synth import ProfileError, SynthOptions
from ..synth.options import ARRIVALS
from . import inputs
from .common import WagonError, default, write_error

if TYPE_CHECKING:
    from ..formats.scenario import Scenario, SessionBatch
    from ..replay.walltime import WallTally, WallTime
    from ..synth.generate import Generator

PROGRESS_MIN_SESSIONS = 200_000
MAX_BYTES = 10 * 2**30       # a bigger scenario is refused without --force (and one the disk
                             # cannot hold, always)


@click.command("synth")
@click.argument("model")
@click.option("-o", "--output", default="scenario.jsonl", show_default=True,
              help="Where to write the scenario.")
@click.option("--duration", type=float, default=None, help="Seconds of arrivals to generate.")
@click.option("--sessions", type=int, default=None, help="Number of sessions to generate.")
@click.option("--rate", type=float, default=None,
              help="Sessions per second (default: the model's).")
@click.option("--rate-scale", type=float, default=default(SynthOptions, "rate_scale"),
              show_default=True, help="Multiply the model's session rate.")
@click.option("--profile", default=default(SynthOptions, "profile"), show_default=True,
              help="constant, steps:T=M,..., flash:at=T,duration=D,peak=P, "
                   "bursts:ratio=R,fraction=F,period=T, cycle:W=M0,M1,..., or model (the "
                   "model's rate profile: the log's day).")
@click.option("--arrivals", type=click.Choice(ARRIVALS),
              default=default(SynthOptions, "arrivals"), show_default=True,
              help="model (the process wagon fit chose: Hawkes for clustered arrivals, else "
                   "Poisson), poisson (WAGON's), renewal (the fitted inter-arrival law's gaps) "
                   "or hawkes.")
@click.option("--classes", default=default(SynthOptions, "classes"), show_default=True,
              help="Client classes NETWORK/PROTOCOL:WEIGHT,... (see docs/synth.md).")
@click.option("--seed", type=int, default=default(SynthOptions, "seed"), show_default=True,
              help="Seed of every random draw: the same seed writes the same bytes.")
@click.option("--deterministic", is_flag=True, help="Every random variable replaced by its mean.")
@click.option("--steady", is_flag=True,
              help="Stationary from the first second: users already mid-session at t = 0 (as a "
                   "running site has them), arrivals throughout; wagon replay plays --duration "
                   "and cuts what runs then (docs/synth.md).")
@click.option("--speedup", type=float, default=default(SynthOptions, "speedup"),
              show_default=True,
              help="Play the whole world this much faster: arrivals and think times divided by "
                   "it, the classes' round trips divided and bandwidths multiplied (docs/synth.md).")
@click.option("--real-network", is_flag=True,
              help="With --speedup: keep the classes' delays and bandwidths real (transfers "
                   "take their real time; the run lasts longer than duration/speedup).")
@click.option("--pages", type=int, default=default(SynthOptions, "pages"), show_default=True,
              help="Pages of the Zipf site used when the model has no site.")
@click.option("--zipf", type=float, default=default(SynthOptions, "zipf"), show_default=True,
              help="Zipf exponent of that site's page popularity.")
@click.option("--force", is_flag=True,
              help="Write a scenario estimated over 10 GiB (one the disk cannot hold is always "
                   "refused).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def command(model, output, duration, sessions, rate, rate_scale, profile, arrivals, classes,
            seed, deterministic, steady, speedup, real_network, pages, zipf, force,
            as_json) -> None:
    """Write a scenario (JSON Lines) of sessions drawn from MODEL."""
    from ..synth.generate import Generator, SynthError, synthesize  # lazy: SciPy, not for --help
    opts = SynthOptions(duration=duration, sessions=sessions, rate=rate, rate_scale=rate_scale,
                        profile=profile, arrivals=arrivals, classes=classes, seed=seed,
                        deterministic=deterministic, speedup=speedup, pages=pages, zipf=zipf,
                        steady=steady, real_network=real_network)
    try:
        gen = Generator(inputs.model(model), opts)
    except (SynthError, ClassError, ProfileError) as e:
        raise WagonError(str(e)) from None
    _check_size(gen, output, force)
    name = os.path.basename(model)
    wall = _Wall()
    try:
        with atomic_write(output) as out:
            # a bar on a terminal only: elsewhere click prints its label alone ("sessions"),
            # a line that says nothing in a log (and a second line beside an error)
            if gen.expected_sessions() > PROGRESS_MIN_SESSIONS and sys.stderr.isatty():
                with click.progressbar(length=gen.expected_sessions(), label="sessions",
                                       file=sys.stderr) as bar:
                    summary = synthesize(gen, out, name, bar.update, wall.add)
            else:
                summary = synthesize(gen, out, name, watch=wall.add)
    except OSError as e:
        raise write_error(output, e) from None
    wall = _wall_time(wall, opts)
    info = {**summary.as_dict(), "scenario": output, "rate": gen.rate, "speedup": speedup,
            "real_network": real_network, "deterministic": deterministic,
            "expected_wall_s": wall.end_s}
    if as_json:
        click.echo(dumps(info))
        return
    note = []
    if speedup != 1:
        note.append(f"the world {speedup:g} times faster (--speedup)" if not real_network else
                    f"arrivals and think times divided by {speedup:g}, the network real")
    if deterministic:
        note.append("deterministic: every variable at its mean")
    if steady:
        note.append("steady: sessions under way at t = 0, cut at the end")
    click.echo(f"{output}: {info['sessions']:,} sessions, {info['clicks']:,} clicks, "
               f"{info['requests']:,} requests; base rate {gen.rate:.4g} sessions/s, "
               f"profile {profile}" + (f"; {'; '.join(note)}" if note else ""))
    click.echo(wall.text())
    text = summary.load_text()
    if text:
        click.echo(text)


class _Wall:
    """The expected wall time of the scenario being written, batch by batch as synthesis
    writes it (``replay.walltime.WallTally``: what reading the file back would give)."""

    def __init__(self) -> None:
        self.tally: WallTally | None = None

    def add(self, sc: Scenario, batch: SessionBatch) -> None:
        from ..replay.walltime import WallTally  # lazy: not for --help
        if self.tally is None:
            self.tally = WallTally(sc)
        self.tally.add(batch)

    def result(self) -> WallTime:
        from ..replay.walltime import WallTime  # lazy: not for --help
        return self.tally.result() if self.tally is not None else WallTime(0.0, 0.0, {}, {})


def _wall_time(tally: _Wall, opts: SynthOptions) -> WallTime:
    """The expected wall time of replaying the written scenario; with ``--real-network`` at a
    speedup, said on stderr with what it does (transfers and delays at their real length)."""
    wall = tally.result()
    if opts.real_network and opts.speedup != 1:
        nominal = (f"{opts.duration / opts.speedup:,.1f} s (--duration / --speedup) of "
                   "arrivals" if opts.duration is not None else f"{wall.arrivals_s:,.1f} s of "
                   "arrivals")
        click.echo(f"wagon synth: --real-network: think and arrival times are divided by "
                   f"{opts.speedup:g} but the classes' round trips and transfers keep their real "
                   f"length, so sessions do not shrink with them: {nominal}, then "
                   f"{wall.drain_s:,.1f} s of draining, about {wall.end_s:,.1f} s in all",
                   err=True)
    return wall


def _check_size(gen: Generator, output: str, force: bool) -> None:
    """Say up front what a big scenario will take; refuse one over MAX_BYTES (unless
    ``force``) or over the free space of ``output``'s disk."""
    n, size = gen.expected_sessions(), gen.expected_bytes()
    if not math.isfinite(size):
        raise WagonError(f"{output}: the model's clicks law ({gen.clicks.name}) has no finite "
                         "mean: sessions of unbounded length (refit, or check the model's "
                         "parameters)")
    what = f"about {n:,} sessions, {size / 2**20:,.2f} MiB"
    try:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(output))).free
    except OSError as e:                             # no such folder, or not one to read
        raise write_error(output, e) from None
    if size > free:
        raise WagonError(f"{output}: the scenario would take {what}; the disk has "
                         f"{free / 2**20:,.1f} MiB free")
    if size > MAX_BYTES and not force:
        raise WagonError(f"{output}: the scenario would take {what} (over "
                         f"{MAX_BYTES / 2**30:g} GiB): give --force to write it")
    if n > PROGRESS_MIN_SESSIONS or size > MAX_BYTES:
        click.echo(f"wagon synth: writing {what} to {output}", err=True)
