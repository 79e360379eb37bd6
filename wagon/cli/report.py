"""``wagon report``: one self-contained HTML file."""
from __future__ import annotations

import click

from ..formats.atomic import atomic_write
from ..formats.results import ResultsError
from ..logs.parse import LogError
from ..modeling import FitOptions, fit_logs
from ..source import not_regular
from . import inputs
from .common import WagonError, default, write_error


@click.command("report")
@click.argument("inputs_", metavar="INPUTS", nargs=-1, required=True)
@click.option("-o", "--output", default="report.html", show_default=True,
              help="Where to write the report.")
@click.option("--compare", "as_compare", is_flag=True, help="Compare the two INPUTS.")
@click.option("--format", "fmt", default=default(FitOptions, "fmt"), show_default=True,
              help="Format of log inputs.")
@click.option("--fit", "with_fit", is_flag=True,
              help="Logs: also fit them as wagon fit does and show the laws, the load's "
                   "variance-time plot and Hurst estimates (seconds more).")
def command(inputs_, output, as_compare, fmt, with_fit) -> None:
    """One self-contained HTML report of a model (.json), a workload (logs, a scenario or replay
    results), or (--compare) two workloads. A log's report is its traffic as GoAccess shows
    it (sortable tables, the log's own dates and times)."""
    for path in inputs_:               # a log is read twice (the workload, then the fit)
        why = not_regular(path)
        if why:
            raise WagonError(why)
    try:
        page = _page(inputs_, as_compare, fmt, with_fit)
    except ResultsError as e:                   # e.g. a replay whose .pages.csv is missing
        raise WagonError(str(e)) from None
    try:
        with atomic_write(output) as f:
            f.write(page)
    except OSError as e:
        raise write_error(output, e) from None
    click.echo(f"{output}: {len(page) / 1e3:,.0f} kB")


def _page(inputs_: tuple[str, ...], as_compare: bool, fmt: str, with_fit: bool) -> str:
    """The report's HTML for the inputs."""
    logs = not as_compare and inputs.are_logs(inputs_)
    if with_fit and not logs:
        raise WagonError("--fit is for logs: a model's or a scenario's report shows its laws "
                         "already")
    if logs and not with_fit:
        return _log_page(inputs_, fmt)
    from ..report.html import (compare_report, model_report,  # lazy: matplotlib and SciPy,
                               workload_report)               # not for --help
    if as_compare:
        if len(inputs_) != 2:
            raise WagonError("--compare takes exactly two inputs")
        return compare_report(*inputs.workloads(inputs_[0], inputs_[1], fmt))
    if inputs_[0].endswith(".json"):
        return model_report(inputs.model(inputs_[0]), f"wagon model: {inputs_[0]}")
    w = inputs.workload(inputs_, fmt)
    if w.kind != "log":
        return workload_report(w)
    try:                       # the laws wagon fit chooses, by the same path and options
        fitted = fit_logs(list(inputs_), FitOptions(fmt=fmt))
    except (LogError, ValueError) as e:
        raise WagonError(str(e)) from None
    return workload_report(w, model=fitted.model, samples=fitted.sessions.samples,
                           head=_log_sections(inputs_, fmt))


def _log_sections(inputs_: tuple[str, ...], fmt: str) -> list[str]:
    """The log's traffic panel (``report.logpanel``); a log that cannot be read: one line."""
    from ..report.logpanel import log_sections, read_log  # lazy: NumPy, not for --help
    try:
        return log_sections(read_log(list(inputs_), fmt))
    except (LogError, ValueError) as e:
        raise WagonError(str(e)) from None


def _log_page(inputs_: tuple[str, ...], fmt: str) -> str:
    """The log's report without the fit: its traffic panel alone, without SciPy or
    matplotlib."""
    from ..report.htmlpage import page  # lazy: see _log_sections
    return page(f"wagon report: {', '.join(inputs_)}", _log_sections(inputs_, fmt))
