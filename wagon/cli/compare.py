"""``wagon compare``: does workload B reproduce workload A?"""
from __future__ import annotations

import click

from ..analysis.options import CompareOptions
from ..formats.strict_json import dumps
from ..modeling import FitOptions
from . import inputs
from .common import Finite, default


def recorded_line(windows) -> str:
    """What reading a log recorded in windows in its recorded time means, said once."""
    w = windowed(windows)
    return (f"recorded in {w['windows']} windows ({w['recorded_s']:,.0f} s of "
            f"{w['span_s']:,.0f}): compared in recorded time, the silences between them "
            "taken out, as wagon fit models it")


def clock_line(stamps: float, clock: float) -> str:
    """What reading a log on the other log's coarser clock means, said once."""
    return (f"stamped every {stamps:g} s, read on the other log's clock of {clock:g} s (its "
            "times floored to it), as a server stamping that coarsely would have logged it: "
            "both logs' sessions and clicks rebuilt alike")


def windowed(windows) -> dict | None:
    """A log's recording windows as counts (None: recorded throughout)."""
    if windows is None:
        return None
    return {"windows": len(windows), "recorded_s": float((windows[:, 1] - windows[:, 0]).sum()),
            "span_s": float(windows[-1, 1] - windows[0, 0])}


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option("--format", "fmt", default=default(FitOptions, "fmt"), show_default=True,
              help="Format of log inputs.")
@click.option("--alpha", type=Finite(0, 1, min_open=True, max_open=True),
              default=default(CompareOptions, "alpha"), show_default=True,
              help="Error level of each verdict: 'same', 'close' or 'differs' is wrong with "
                   "probability at most alpha (each end of an interval is a one-sided bound "
                   "at this level).")
@click.option("--margin", type=Finite(0, 1, min_open=True),
              default=default(CompareOptions, "margin"), show_default=True,
              help="Largest KS distance between two distributions still 'same'.")
@click.option("--tolerance", type=Finite(0, 1e6, min_open=True),
              default=default(CompareOptions, "tolerance"), show_default=True,
              help="Relative difference still 'close' (half, absolute, for shares and "
                   "exponents).")
@click.option("--speedup", type=Finite(0, 1e6, min_open=True), default=1.0,
              show_default=True,
              help="Log inputs were written by a server during a replay at this --speedup: "
                   "their times are multiplied by it before sessions are rebuilt (a scenario "
                   "and a replay's results say their own).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the table and the overall verdict as JSON.")
def command(a, b, fmt, alpha, margin, tolerance, speedup, as_json) -> None:
    """Compare workload B (log, scenario or replay results) against workload A: a table of
    verdicts, then one overall verdict (same, differs or undecided). The exit status is 0
    whatever the verdict (2: bad input)."""
    from ..analysis.compare import compare, overall, rows_text, verdict_line  # lazy: SciPy
    sides = dict(zip("ab", inputs.digests(a, b, fmt, speedup)))
    read = {k: d.read for k, d in sides.items() if d.read is not None}
    for k, st in read.items():         # what a log's reading left out, as wagon fit says it
        click.echo("\n".join(f"{k.upper()}: {line}" for line in st.summary_lines()), err=True)
        if sides[k].robot_requests:
            click.echo(f"{k.upper()}: robots' requests left out {sides[k].robot_requests:,} "
                       "(a model has none)", err=True)
        if sides[k].windows is not None:
            click.echo(f"{k.upper()}: {recorded_line(sides[k].windows)}", err=True)
        if sides[k].stamps is not None:
            click.echo(f"{k.upper()}: {clock_line(sides[k].stamps, sides[k].resolution)}",
                       err=True)
    rows = compare(sides["a"], sides["b"], CompareOptions(alpha, tolerance, margin))
    verdict = overall(rows)
    click.echo(dumps({"a": a, "b": b, "verdict": verdict, "rows": rows,
                      "read": {k: {**st.as_dict(), "robot_requests": sides[k].robot_requests,
                                   "recording_windows": windowed(sides[k].windows),
                                   "stamps_s": sides[k].stamps,
                                   "read_on_clock_s": sides[k].resolution
                                   if sides[k].stamps is not None else None}
                               for k, st in read.items()}})
               if as_json else f"{rows_text(rows)}\n{verdict_line(verdict)}")
