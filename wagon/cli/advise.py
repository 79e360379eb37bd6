"""``wagon advise keepalive``: WAGON's keep-alive timeout model, and the corrected one."""
from __future__ import annotations

import warnings

import click

from ..analysis.options import DEFAULT_CLICKS
from ..formats.strict_json import dumps
from . import inputs
from .common import Count, Finite, WagonError


@click.group("advise")
def command() -> None:
    """Advice from models."""


@command.command("keepalive")
@click.option("--model", default=None, help="Take the think-time law and clicks from a model.")
@click.option("--think", default=None, help='A law, e.g. "lognormal(mu=3, sigma=1.1)".')
@click.option("--clicks-mean", type=Finite(1, 1e6), default=None,
              help=f"E[N] (default: the model's, or {DEFAULT_CLICKS:g}).")
@click.option("--delta", type=Finite(-1e6, 1e6), default=None,
              help="The paper's delta = E[N-1]/E[N] x (E[X1] - E[X2]), s.")
@click.option("--gain", type=Finite(-1e6, 1e6), default=None,
              help="E[X1] - E[X2], s: what a kept-alive connection saves per click.")
@click.option("--x1", type=Finite(-1e6, 1e6),
              default=None, help="Mean transfer time on a new connection, s.")
@click.option("--x2", type=Finite(-1e6, 1e6),
              default=None, help="Mean transfer time when kept alive, s.")
@click.option("--servers", type=Count(1, 10**6),
              default=None, help="Server processes m (stability).")
@click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON.")
def keepalive(model, think, clicks_mean, delta, gain, x1, x2, servers, as_json) -> None:
    """Keep-alive timeout that minimises the work sessions bring: WAGON's model (Theorem 1)
    and the model corrected for the time a kept connection holds a process."""
    from ..analysis.keepalive import (LawSyntaxError, advise,  # lazy: SciPy, not for --help
                                      parse_law, think_and_clicks)
    if (model is None) == (think is None):
        raise WagonError("give exactly one of --model and --think")
    try:
        if model is not None:
            law, model_clicks = think_and_clicks(inputs.model(model))
            clicks_mean = clicks_mean or model_clicks
        else:
            law = parse_law(think)
    except (ValueError, LawSyntaxError) as e:
        raise WagonError(f"{model or think}: {e}") from None
    clicks_mean = clicks_mean or DEFAULT_CLICKS
    x1, x2 = _transfer_times(delta, gain, x1, x2, clicks_mean)
    try:
        with warnings.catch_warnings():             # SciPy's overflow far in a law's tail (its
            warnings.simplefilter("ignore", RuntimeWarning)     # limit is right): not printed
            a = advise(law, clicks_mean, x1, x2, servers)
    except ValueError as e:
        raise WagonError(str(e)) from None
    if as_json:
        click.echo(dumps(a.as_dict()))
        return
    click.echo(f"paper's model (Theorem 1): optimal keep-alive timeout {a.optimal_timeout:.4f} s"
               f"  (delta = {a.delta:.4g} s, gain E[X1] - E[X2] = {a.gain:.4g} s, "
               f"E[N] = {clicks_mean:.4g})")
    click.echo(f"  work per session E[W]: {a.work_at_optimum:.4g} s at the optimum, "
               f"{a.work_without_keepalive:.4g} s without keep-alive")
    click.echo(f"corrected model (a kept connection holds a process min(Y, timeout), the whole "
               f"timeout after the last click): optimal timeout {a.corrected_timeout:.4f} s")
    click.echo(f"  work per session E[W]: {a.corrected_work_at_optimum:.4g} s at its optimum, "
               f"{a.corrected_work_at_paper_timeout:.4g} s at the paper's timeout")
    for label, rates in (("paper", a.max_rate), ("corrected", a.corrected_max_rate)):
        for m, rate in (rates or {}).items():
            click.echo(f"  {label}: stable with {m} server process(es) while sessions arrive at "
                       f"< {rate:.4g}/s (lambda E[W] < m)")


def _transfer_times(delta, gain, x1, x2, clicks_mean) -> tuple[float, float]:
    """(E[X1], E[X2]) from exactly one of --delta, --gain, or --x1 with --x2."""
    given = [delta is not None, gain is not None, x1 is not None or x2 is not None]
    if sum(given) != 1 or (given[2] and (x1 is None or x2 is None)):
        raise WagonError("give one of --delta, --gain, or --x1 and --x2")
    if delta is not None:
        if delta < 0 or (delta > 0 and clicks_mean <= 1):
            raise WagonError("--delta needs delta >= 0 and E[N] > 1")
        gain = delta * clicks_mean / (clicks_mean - 1) if delta else 0.0
    if gain is not None:
        if gain < 0:
            raise WagonError("--gain must be >= 0")
        return gain, 0.0
    return x1, x2
