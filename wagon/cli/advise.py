"""``wagon advise keepalive``: WAGON's keep-alive timeout model."""
from __future__ import annotations

import click

from ..analysis.keepalive import DEFAULT_CLICKS, LawSyntaxError, advise, parse_law, think_and_clicks
from ..formats.strict_json import dumps
from . import inputs
from .common import WagonError


@click.group("advise")
def command() -> None:
    """Advice from models."""


@command.command("keepalive")
@click.option("--model", default=None, help="Take the think-time law and clicks from a model.")
@click.option("--think", default=None, help='A law, e.g. "lognormal(mu=3, sigma=1.1)".')
@click.option("--clicks-mean", type=float, default=None,
              help=f"E[N] (default: the model's, or {DEFAULT_CLICKS:g}).")
@click.option("--delta", type=float, default=None,
              help="Transfer-time gain of a persistent connection, s (E[X1] - E[X2]).")
@click.option("--x1", type=float, default=None, help="Mean transfer time on a new connection, s.")
@click.option("--x2", type=float, default=None, help="Mean transfer time when kept alive, s.")
@click.option("--servers", type=int, default=None, help="Server processes m (stability).")
@click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON.")
def keepalive(model, think, clicks_mean, delta, x1, x2, servers, as_json) -> None:
    """Keep-alive timeout that minimises the work sessions bring (WAGON's queueing model)."""
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
    if delta is None and (x1 is None or x2 is None):
        raise WagonError("give --delta, or --x1 and --x2")
    if x1 is None or x2 is None:
        x2 = 0.0 if x2 is None else x2
        x1 = x2 + delta
    try:
        a = advise(law, clicks_mean, x1, x2, servers)
    except ValueError as e:
        raise WagonError(str(e)) from None
    if as_json:
        click.echo(dumps(a.as_dict()))
        return
    click.echo(f"optimal keep-alive timeout: {a.optimal_timeout:.3f} s  (delta = {a.delta:.4g} s, "
               f"E[N] = {clicks_mean:.3g}, E[X1] = {x1:.4g} s, E[X2] = {x2:.4g} s)")
    click.echo(f"work per session E[W]: {a.work_at_optimum:.4g} s at the optimum, "
               f"{a.work_without_keepalive:.4g} s without keep-alive")
    for m, rate in (a.max_rate or {}).items():
        click.echo(f"  stable with {m} server process(es) while sessions arrive at < "
                   f"{rate:.4g}/s (lambda E[W] < m)")
