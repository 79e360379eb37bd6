"""``wagon replay``: a scenario against a server (imports no SciPy: see wagon.replay)."""
from __future__ import annotations

import click

from ..cluster import ClusterError, parse_cluster
from ..formats.atomic import DISK_FULL
from ..formats.classes import ClassError
from ..formats.results_parquet import require_pyarrow
from ..formats.scenario import ScenarioError, read_scenario
from ..formats.strict_json import dumps
from ..replay import ReplayError, ReplayOptions, exit_status, replay
from ..replay.limits import raise_nofile
from ..replay.record import summary_text
from ..replay.recover import DISK_FULL_STOP, note_stop
from ..replay.runner import NETWORK_MODES, OBJECTS, check_network, estimate_connections, sources_for
from .common import (Count, Finite, Given, WagonError, cannot_play, cluster_client, default,
                     tls_options,
                     write_error)

PROTOCOLS = ("http10xK, http11, http11xK, pipeline, early-close[xK], early-close-pipeline, "
             "h2 or h2xK (HTTP/2, K streams), each optionally +noresume (no TLS session "
             "resumption)")
EXIT_HELP = ("Exit status: 0 complete and within the thresholds; 2 bad input; 3 the target did "
             "not answer the pre-flight connect; 4 a --fail-on threshold failed; 5 the run was "
             "cut short by a signal or a dead worker, after writing everything (--max-time is "
             "a planned end: 0 or 4); 6 the disk filled up.")


def _run(scenario: str, opts: ReplayOptions, cluster: str | None) -> dict:
    """``replay`` in this machine's processes, or on the Dask cluster ``cluster``."""
    if cluster is None:
        return replay(scenario, opts)
    spec = parse_cluster(cluster)
    from ..replay.cluster import replay_on_cluster  # lazy: Dask is optional, only for --cluster
    with cluster_client(spec) as client:
        return replay_on_cluster(scenario, opts, client)


@click.command("replay", epilog=EXIT_HELP)
@click.argument("scenario")
@click.option("--target", required=True,
              help="The server: http://HOST:PORT/ or https://HOST:PORT/, or "
                   "http(s)://HOST:PORT/PREFIX/ to request every URL under /PREFIX/.")
@click.option("--results", type=Given(), default=default(ReplayOptions, "results"),
              metavar="FILE",
              help="CSV of every request (and FILE's .pages.csv of every page, .run.json of "
                   "the run); Parquet when FILE ends in .parquet (pip install "
                   "'wagon[parquet]').")
@click.option("--workers", type=Count(1, 4096),
              default=default(ReplayOptions, "workers"), show_default=True,
              help="Processes sharing the sessions (one per core).")
@click.option("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
              help="Play on Dask workers instead (one segment of the sessions each, started "
                   "together; replaces --workers): N local worker processes, or the workers "
                   "of a running scheduler.")
@click.option("--protocol", type=Given(), default=None,
              help=f"Override every class' protocol: {PROTOCOLS}.")
@click.option("--no-emulation", is_flag=True, help="No network delay or bandwidth emulation.")
@click.option("--network", type=click.Choice(NETWORK_MODES),
              default=default(ReplayOptions, "network"), show_default=True,
              help="How the classes' networks are emulated: 'client' in this process (delay "
                   "and bandwidth as the client sees them), 'packet' every packet through "
                   "its client's path, felt by the server's TCP (root; a loopback target; "
                   "docs/replay.md, 'Packet-level paths').")
@click.option("--loss", type=Finite(0, 1, max_open=True),
              default=default(ReplayOptions, "loss"), show_default=True,
              help="--network packet: packet loss probability of classes that give none "
                   "(e.g. 0.01).")
@click.option("--queue-ms", type=Finite(0, 1e6, min_open=True),
              default=default(ReplayOptions, "queue_ms"), show_default=True,
              help="--network packet: each link's tail-drop queue, in ms of its rate (at "
                   "least 16 packets).")
@click.option("--topology", type=click.Path(dir_okay=False), default=None,
              help="--network packet: a topology file (TOML): shared links in front of the "
                   "classes' access links, Gilbert-Elliott losses (docs/formats.md).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              default=default(ReplayOptions, "seed"), show_default=True,
              help="--network packet: the seed of the packet losses' random stream.")
@click.option("--no-follow", is_flag=True, help="Do not follow redirects (a 3xx is an answer).")
@click.option("--no-status-marks", is_flag=True,
              help="Do not ask for the statuses the log shows (?wagon_status=N, which a site "
                   "built by wagon answers): the target is the application itself, which "
                   "answers as it does.")
@click.option("--no-identity", is_flag=True,
              help="Every user as one client: one source address, User-Agent wagon-replay, no "
                   "Referer, no cookies. By default each session is a client of its own "
                   "(docs/replay.md, 'Users as the server sees them').")
@click.option("--source-addresses", type=Given(), default=None, metavar="CIDR|ADDR,ADDR,...",
              help="This machine's addresses the sessions connect from, one per session in "
                   "turn (a loopback target needs none: 127.64.0.0/10 is used).")
@tls_options
@click.option("--connect-timeout", type=Finite(0, 1e6, min_open=True),
              default=default(ReplayOptions, "connect_timeout"),
              show_default=True, help="Seconds to wait for a TCP connection.")
@click.option("--timeout", type=Finite(0, 1e6), default=default(ReplayOptions, "timeout"),
              show_default=True, help="Inactivity timeout: seconds without a byte from the "
                                      "server (0: none). A slow transfer that progresses is "
                                      "never cut.")
@click.option("--request-timeout", type=Finite(0, 1e6, min_open=True),
              default=default(ReplayOptions, "request_timeout"),
              help="Optional cap (s) on a whole request, from its issue to its last byte.")
@click.option("--fail-on", multiple=True, metavar="EXPR",
              default=default(ReplayOptions, "fail_on"), show_default=True,
              help="A threshold that fails the run (exit 4), e.g. 'errors>1%' or "
                   "'request.p99>2000' (ms); repeatable; replaces the default.")
@click.option("--max-time", type=Finite(0, 1e9, min_open=True),
              default=default(ReplayOptions, "max_time"),
              help="Stop after this many seconds.")
@click.option("--warmup", type=Finite(0, 1e6), default=default(ReplayOptions, "warmup"),
              show_default=True,
              help="Leave the first seconds of the run out of every figure (console, --json, "
                   "run file, report); the summary says what it left out.")
@click.option("--cooldown", type=Finite(0, 1e6),
              default=default(ReplayOptions, "cooldown"), show_default=True,
              help="Leave the last seconds before the planned end (--max-time, or a --steady "
                   "scenario's end) out of every figure.")
@click.option("--quiet", is_flag=True,
              help="No progress. Otherwise the expected wall time once the target answers, then every few seconds stderr shows elapsed time, "
                   "sessions started/active/ended, ok requests/s, errors and p99 so far (one "
                   "line rewritten on a terminal, a line each otherwise).")
@click.option("--progress-every", type=Finite(0.1, 1e6),
              default=default(ReplayOptions, "progress_every"), show_default=True,
              help="Seconds between progress lines.")
@click.option("--watchdog", type=Finite(0, 1e6, min_open=True),
              default=default(ReplayOptions, "watchdog"), show_default=True,
              help="Seconds of silence (no heartbeat) after which a worker or the packet relay "
                   "is lost: killed, named in the summary, and the run stopped.")
@click.option("--objects", type=click.Choice(OBJECTS),
              default=default(ReplayOptions, "objects"), show_default=True,
              help="When a click's embedded objects are asked for: 'paced', each no earlier "
                   "than its delay after the page as the log placed them (the scenario's "
                   "object_delays; at once without them), or 'eager', as soon as the page is "
                   "done.")
@click.option("--script", type=click.Path(dir_okay=False),
              help="A Python file whose 'script = Script(...)' adds what access logs lack: "
                   "request bodies and headers, a login at each session's start, values taken "
                   "from answers, checks (docs/application.md).")
@click.option("--dashboard", type=Given(), default=default(ReplayOptions, "dashboard"),
              metavar="[HOST:]PORT",
              help="Serve a live view of the run at http://HOST:PORT/ (HOST 127.0.0.1 unless "
                   "given; PORT 0: a free one, printed on stderr): a page that updates itself "
                   "every second, /metrics for Prometheus, /state.json.")
@click.option("--dashboard-hold", type=Finite(0, 1e6),
              default=default(ReplayOptions, "dashboard_hold"), show_default=True,
              help="Seconds the live view keeps serving the final figures after the summary "
                   "is printed (a last look, a last scrape; Ctrl-C ends it).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def command(scenario, target, results, workers, cluster, protocol, no_emulation, network, loss,
            queue_ms, topology, seed, no_follow, no_status_marks, no_identity, source_addresses,
            ca_file,
            insecure, tls_version,
            connect_timeout, timeout, request_timeout, fail_on, max_time, warmup, cooldown, quiet,
            progress_every, watchdog, objects, script, dashboard, dashboard_hold, as_json) -> None:
    """Play SCENARIO against the server at --target and report what clients saw."""
    why = results and require_pyarrow(results)
    if why:
        raise WagonError(why)
    try:
        sc = read_scenario(scenario)
        limit = raise_nofile()
        need = estimate_connections(sc, protocol)
    except ClassError as e:
        raise WagonError(f"--protocol: {e}") from None
    except ScenarioError as e:
        raise WagonError(str(e)) from None
    if need > limit * max(workers, 1):
        click.echo(f"wagon: this run would hold about {need:,} connections at its peak; the "
                   f"open-files limit is {limit:,} per process: expect 'too_many_open_files' "
                   "errors (use --workers, or raise the hard limit)", err=True)
    opts = ReplayOptions(target=target, results=results, workers=workers, protocol=protocol,
                         emulation=not no_emulation, follow_redirects=not no_follow,
                         status_marks=not no_status_marks,
                         connect_timeout=connect_timeout, timeout=timeout,
                         request_timeout=request_timeout, fail_on=tuple(fail_on),
                         max_time=max_time, warmup=warmup, cooldown=cooldown,
                         progress=not quiet,
                         progress_every=progress_every, identity=not no_identity,
                         source_addresses=source_addresses, network=network, loss=loss,
                         queue_ms=queue_ms, topology=topology, seed=seed, ca_file=ca_file,
                         insecure=insecure,
                         tls_version=tls_version, watchdog=watchdog, objects=objects,
                         script=script, dashboard=dashboard,
                         dashboard_hold=dashboard_hold)
    try:
        check_network(opts)
        pool = sources_for(opts)
    except ReplayError as e:
        raise WagonError(str(e)) from None
    if pool is not None and pool.warning:
        click.echo(f"wagon: {pool.warning}", err=True)
    try:
        summary = _run(scenario, opts, cluster)
    except ClusterError as e:
        raise WagonError(str(e)) from None
    except ReplayError as e:
        raise cannot_play(e) from None
    except ScenarioError as e:
        raise WagonError(str(e)) from None
    except OSError as e:
        if results and e.errno in DISK_FULL:
            note_stop(results, DISK_FULL_STOP)
        kept = (f"the rows written until then are kept in {results}.part*: 'wagon recover "
                f"{results}' completes the run's results once there is room" if results else
                "the run has no summary")
        raise write_error("the results", e, kept) from None
    click.echo(dumps(summary) if as_json else summary_text(summary))
    if dashboard is not None:
        from ..replay.dashboard import linger   # lazy: aiohttp only for --dashboard
        linger()
    click.get_current_context().exit(exit_status(summary))
