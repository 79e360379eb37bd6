"""``wagon serve``: the embedded server for a scenario's, a model's or a directory's site."""
from __future__ import annotations

import click

from ..replay.serve_options import ServeOptions
from ..synth import SynthOptions, resolve_site
from . import inputs
from .common import Count, Finite, Given, WagonError, default


@click.command("serve")
@click.option("--scenario", default=None, help="Serve the site this scenario requests.")
@click.option("--model", default=None, help="Serve this model's site.")
@click.option("--site", "site_dir", type=Given(), default=None,
              help="Serve the files under this directory.")
@click.option("--host", default=default(ServeOptions, "host"), show_default=True,
              help="Address to listen on.")
@click.option("--port", type=Count(0, 65535),
              default=default(ServeOptions, "port"), show_default=True,
              help="Port to listen on (0: any free port, printed).")
@click.option("--max-connections", type=Count(1, 10**6),
              default=default(ServeOptions, "max_connections"),
              help="Connections served at once, like Apache's MaxClients: others wait in the "
                   "kernel's listen backlog.")
@click.option("--backlog", type=Count(1, 10**6),
              default=default(ServeOptions, "backlog"), show_default=True,
              help="The kernel's listen backlog (Apache's ListenBacklog): connections beyond "
                   "it have their SYNs dropped.")
@click.option("--header-timeout", type=Finite(0, 1e6),
              default=default(ServeOptions, "header_timeout"),
              show_default=True, help="Seconds a request's header may take to arrive (Apache's "
                                      "RequestReadTimeout header=); 0: none.")
@click.option("--access-log", type=Given(), default=default(ServeOptions, "access_log"),
              metavar="FILE",
              help="Write a line per request: connection, its request count, status, bytes, "
                   "request time (s), URI.")
@click.option("--keepalive-timeout", type=Finite(0, 1e6),
              default=default(ServeOptions, "keepalive_timeout"), show_default=True,
              help="Seconds an idle persistent connection is kept.")
@click.option("--service-time", type=Finite(0, 1e6), default=default(ServeOptions, "service_time"),
              show_default=True, help="Seconds added to every request.")
@click.option("--pages", type=Count(1, 10**7),
              default=default(SynthOptions, "pages"), show_default=True,
              help="With --model: pages of the Zipf site used when the model has no site.")
@click.option("--zipf", type=Finite(0, 10),
              default=default(SynthOptions, "zipf"), show_default=True,
              help="With --model: Zipf exponent of that site's page popularity.")
@click.option("--max-time", type=Finite(0, 1e9, min_open=True),
              default=default(ServeOptions, "max_time"),
              help="Stop after this many seconds.")
def command(scenario, model, site_dir, host, port, max_connections, backlog, header_timeout,
            access_log, keepalive_timeout, service_time, pages, zipf, max_time) -> None:
    """Serve the modeled site (embedded aiohttp server): the same bytes ``wagon site build``
    writes for the same --scenario or --model."""
    from ..replay.server import make_app, run_server  # lazy: aiohttp, not for --help
    if sum(x is not None for x in (scenario, model, site_dir)) != 1:
        raise WagonError("give exactly one of --scenario, --model and --site")
    opts = ServeOptions(host=host, port=port, max_connections=max_connections, backlog=backlog,
                        header_timeout=header_timeout or None, access_log=access_log,
                        keepalive_timeout=keepalive_timeout, service_time=service_time,
                        max_time=max_time)
    try:
        if access_log is not None:
            open(access_log, "a").close()
    except OSError as e:
        raise WagonError(f"--access-log {access_log}: {e.strerror or e}") from None
    try:
        if site_dir is not None:
            app = make_app(directory=site_dir, service_time=service_time)
        else:
            site = (inputs.scenario(scenario).site if scenario
                    else resolve_site(inputs.model(model), pages, zipf).spec)
            app = make_app(site, service_time=service_time)
    except FileNotFoundError as e:
        raise WagonError(str(e)) from None
    try:
        run_server(app, opts, lambda p: click.echo(f"serving on http://{host}:{p}/", err=True))
    except OSError as e:
        raise WagonError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
