"""``wagon compare``: does workload B reproduce workload A?"""
from __future__ import annotations

import click

from ..analysis.options import CompareOptions
from ..formats.strict_json import dumps
from ..modeling import FitOptions
from . import inputs
from .common import Finite, default


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option("--format", "fmt", default=default(FitOptions, "fmt"), show_default=True,
              help="Format of log inputs.")
@click.option("--alpha", type=Finite(0, 1, min_open=True, max_open=True),
              default=default(CompareOptions, "alpha"), show_default=True,
              help="Error level of the intervals (they hold with probability 1 - alpha).")
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
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def command(a, b, fmt, alpha, margin, tolerance, speedup, as_json) -> None:
    """Compare workload B (log, scenario or replay results) against workload A."""
    from ..analysis.compare import compare, rows_text  # lazy: SciPy, not for --help
    sides = {"a": inputs.workload([a], fmt, log_speedup=speedup, digested=True),
             "b": inputs.workload([b], fmt, log_speedup=speedup, digested=True)}
    read = {k: d.read for k, d in sides.items() if d.read is not None}
    for k, st in read.items():         # what a log's reading left out, as wagon fit says it
        click.echo("\n".join(f"{k.upper()}: {line}" for line in st.summary_lines()), err=True)
    rows = compare(sides["a"], sides["b"], CompareOptions(alpha, tolerance, margin))
    click.echo(dumps({"a": a, "b": b, "rows": rows,
                      "read": {k: st.as_dict() for k, st in read.items()}})
               if as_json else rows_text(rows))
