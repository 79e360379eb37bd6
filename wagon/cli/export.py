"""``wagon export``: a scenario for httperf, Tsung, or as a Common (or combined) Log Format log."""
from __future__ import annotations

import click

from ..formats.atomic import atomic_write
from ..formats.scenario import ScenarioError
from ..synth.export import CLF_EPOCH, TSUNG_MAX_SESSIONS, export_clf, export_httperf, export_tsung
from . import inputs
from .common import Count, Finite, WagonError, write_error


@click.command("export")
@click.argument("scenario")
@click.option("--to", "fmt", type=click.Choice(["httperf", "tsung", "clf", "combined"]),
              required=True,
              help="The tool or format to write for (combined: clf with each request's "
                   "Referer, on --target, and User-Agent).")
@click.option("-o", "--output", required=True, help="Where to write it.")
@click.option("--target", default="http://127.0.0.1:8080/", show_default=True,
              help="Server the httperf or Tsung run will load.")
@click.option("--max-sessions", type=Count(), default=None,
              help=f"Export only the first N sessions (Tsung: default {TSUNG_MAX_SESSIONS}).")
@click.option("--start", "start_epoch", type=Finite(0, 1e11), default=CLF_EPOCH, show_default=True,
              help="clf, combined: Unix time of the scenario's time 0 (2001-08-01 00:00:00 "
                   "UTC).")
def command(scenario, fmt, output, target, max_sessions, start_epoch) -> None:
    """Export SCENARIO to httperf (--wsesslog), Tsung XML or a Common (or combined) Log
    Format log."""
    sc = inputs.scenario(scenario)
    try:
        with atomic_write(output) as out:
            if fmt == "httperf":
                what = f"{export_httperf(sc, out, target, max_sessions):,} sessions"
            elif fmt == "tsung":
                n = export_tsung(sc, out, target, max_sessions or TSUNG_MAX_SESSIONS)
                what = f"{n:,} sessions"
            else:
                n = export_clf(sc, out, start_epoch, target if fmt == "combined" else None)
                what = f"{n:,} log lines"
    except ScenarioError as e:
        raise WagonError(str(e)) from None
    except OverflowError:                       # a start or think time of 1e308 s
        raise WagonError(f"{scenario}: a time too far from --start for a log date") from None
    except OSError as e:
        raise write_error(output, e) from None
    click.echo(f"{output}: {what} ({fmt})")
