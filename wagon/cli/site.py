"""``wagon site build``: the site a scenario requests (or a model's) as files."""
from __future__ import annotations

import click

from ..formats.scenario import Scenario, ScenarioError
from ..formats.site import build_site
from ..synth import SynthOptions, resolve_site
from . import inputs
from .common import Count, Finite, Given, WagonError, default, write_error


@click.group("site")
def command() -> None:
    """The modeled site."""


def _concrete(sc: Scenario) -> dict[str, int]:
    """The concrete URLs ``sc``'s clicks ask for of its GET template pages (URL → page): a
    static server has a file for each (``build_site``)."""
    out = {}
    for b in sc.batches():
        for click, url in b.urls or ():
            page = int(b.pages[click])
            if sc.site.page_methods[page] == "GET":
                out.setdefault(url, page)
    return out


@command.command("build")
@click.argument("outdir", type=Given())
@click.option("--scenario", default=None, help="Write the site this scenario requests.")
@click.option("--model", default=None, help="Write this model's site.")
@click.option("--pages", type=Count(1, 10**7),
              default=default(SynthOptions, "pages"), show_default=True,
              help="With --model: pages of the Zipf site used when the model has no site.")
@click.option("--zipf", type=Finite(0, 10),
              default=default(SynthOptions, "zipf"), show_default=True,
              help="With --model: Zipf exponent of that site's page popularity.")
def build(outdir, scenario, model, pages, zipf) -> None:
    """Write the site (pages of their size referencing their objects) under OUTDIR: exactly the
    bytes ``wagon serve`` serves for the same --scenario or --model."""
    if (scenario is None) == (model is None):
        raise WagonError("give exactly one of --scenario and --model")
    sc = inputs.scenario(scenario) if scenario else None
    site = sc.site if sc else resolve_site(inputs.model(model), pages, zipf).spec
    try:
        report = build_site(site, outdir, _concrete(sc) if sc else None)
    except ScenarioError as e:                 # a session line read for its URLs
        raise WagonError(str(e)) from None
    except OSError as e:
        raise write_error(f"the site under {outdir}", e) from None
    skipped = ", ".join(f"{why} {n}" for why, n in report.skipped.items())
    click.echo(f"{outdir}: {report.pages:,} pages, {report.objects:,} objects, "
               f"{report.bytes / 1e6:.1f} MB"
               + (f"; {report.grown} pages larger than modeled (their links need more room)"
                  if report.grown else "")
               + (f"; {report.as_pages} objects are pages too (their page serves them)"
                  if report.as_pages else "")
               + (f"; {report.folders} pages are folders too (written as their index.html: "
                  "serve them with the configuration in docs/synth.md)" if report.folders else "")
               + (f"; skipped: {skipped}" if skipped else ""))
