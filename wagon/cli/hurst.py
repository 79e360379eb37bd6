"""``wagon hurst``: Hurst estimates of request counts."""
from __future__ import annotations

import itertools
import re
import warnings
import zlib

import click
import numpy as np

from ..analysis.options import DEFAULT_SCALES
from ..formats.strict_json import dumps
from ..modeling import FitOptions
from ..source import not_regular
from . import inputs
from .common import Finite, WagonError, default, not_wagon


def _scales(text: str) -> list[float]:
    try:
        scales = [float(x) for x in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"{text!r}: give bin widths in seconds, e.g. 0.1,1") from None
    if any(s <= 0 for s in scales):
        raise click.BadParameter("bin widths must be positive")
    return scales


def _with_line(path: str, message: str) -> str:
    """NumPy's loadtxt message with the file's line: its 'at row N' counts the values' rows
    from 0, not the blank and comment lines it skips ('1', '', 'x': 'at row 1' is line 3)."""
    m = re.search(r"at row (\d+), column \d+", message)
    if m is None:
        return message
    with np.lib.npyio.DataSource(None).open(path, "rt", encoding="latin-1") as f:   # as loadtxt
        rows = (n for n, text in enumerate(f, 1) if text.split("#", 1)[0].strip())
        line = next(itertools.islice(rows, int(m[1]), None), None)
    return message[:m.start()] + (f"on line {line}" if line else m[0]) + message[m.end():]


@click.command("hurst")
@click.argument("inputs_", metavar="INPUTS", nargs=-1)
@click.option("--counts", "counts_file", default=None, metavar="FILE",
              help="A plain series of counts, one number per line.")
@click.option("--scales", default=",".join(f"{s:g}" for s in DEFAULT_SCALES), show_default=True,
              help="Bin widths (s) at which requests are counted.")
@click.option("--format", "fmt", default=default(FitOptions, "fmt"), show_default=True,
              help="Format of log inputs.")
@click.option("--base-month", default=None, metavar="YYYY-MM",
              help="Month and year for logs whose timestamps lack them (EPA).")
@click.option("--detrend", "detrend_s", type=Finite(0, 1e9, min_open=True), default=None,
              metavar="SECONDS", help="Remove the mean of every SECONDS of counts first "
                                       "(e.g. 3600: hourly means), or of every SECONDS values "
                                       "of --counts.")
@click.option("--json", "as_json", is_flag=True, help="Print the estimates as JSON.")
def command(inputs_, counts_file, scales, fmt, base_month, detrend_s, as_json) -> None:
    """Hurst parameter of request counts of INPUTS (logs, a scenario or replay results)."""
    from ..analysis.selfsim import hurst_by_scale, hurst_report  # lazy: SciPy, not for --help
    if (counts_file is None) == (not inputs_):
        raise WagonError("give INPUTS or --counts FILE")
    if counts_file:
        not_wagon([counts_file], "a series of counts")
        why = not_regular(counts_file)
        if why:
            raise WagonError(why)
        try:
            with warnings.catch_warnings():     # an empty file gets the one-line error below
                warnings.simplefilter("ignore", UserWarning)
                counts = np.loadtxt(counts_file, ndmin=1)
        except (OSError, ValueError, EOFError, zlib.error) as e:     # .gz files are inflated
            raise WagonError(f"{counts_file}: {_with_line(counts_file, str(e))}") from None
        try:
            estimates, notes = hurst_report(counts, int(detrend_s) if detrend_s else None)
        except ValueError as e:
            raise WagonError(f"{counts_file}: {e}") from None
        out = [{"scale": "counts", "bins": len(counts), **e.as_dict()} for e in estimates]
    else:
        w = inputs.workload(inputs_, fmt, base_month)
        if w.kind == "scenario":                 # in modeled seconds, as report and compare
            w = w.modeled()
        out, notes = hurst_by_scale(w.time, w.resolution, _scales(scales), detrend_s)
    if not out:
        raise WagonError("no series long enough to estimate: " + "; ".join(notes))
    if as_json:
        click.echo(dumps({"estimates": out, "notes": notes}))
        return
    click.echo(f"{'scale':>7s} {'bins':>8s}  {'estimator':20s} {'H':>7s}  {'95% CI':17s} "
               f"{'points':>6s}  fit range")
    for e in out:
        ci = f"[{e['ci'][0]:.3f}, {e['ci'][1]:.3f}]" if e["ci"] else ""
        click.echo(f"{e['scale']:>7s} {e['bins']:>8,}  {e['estimator']:20s} {e['H']:7.3f}  "
                   f"{ci:17s} {e['points']:>6d}  {e['fit_range']}")
        if e.get("bandwidth"):
            click.echo(f"{'':18s}{'local Whittle by bandwidth':22s} " + ", ".join(
                f"m=n^{b['exponent']:g}: {b['H']:.3f}" for b in e["bandwidth"]))
    for note in notes:
        click.echo(f"note: {note}", err=True)
