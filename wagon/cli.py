"""The ``wagon`` command line (click)."""
from __future__ import annotations

import json
import os
import sys

import click

from . import __version__
from .model import save_model
from .modeling import FitOptions, FitResult, fit_logs
from .parse import LogError
from .sessions import SessionRules

PROGRESS_MIN_BYTES = 64 << 20          # about two seconds of parsing


class WagonError(click.ClickException):
    """A one-line error with exit status 2 (bad input, unreadable file)."""

    exit_code = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wagon")
def main() -> None:
    """wagon: model, synthesize and replay web workloads."""


def _progress_reader(paths: list[str]):
    """A (callback, bar) pair: a click progress bar when the inputs are large, else (None, None)."""
    total = sum(os.path.getsize(p) for p in paths if p != "-" and os.path.exists(p))
    if total < PROGRESS_MIN_BYTES:
        return None, None
    bar = click.progressbar(length=total, label="parsing", file=sys.stderr)
    return bar.update, bar


@main.command("fit")
@click.argument("logs", nargs=-1, required=True)
@click.option("-o", "--output", default="model.json", show_default=True,
              help="Where to write the model.")
@click.option("--format", "fmt", default="auto", show_default=True,
              help="auto, common, combined, epa, or an Apache LogFormat string.")
@click.option("--identity", type=click.Choice(["host", "host+agent"]), default="host",
              show_default=True, help="What identifies a client.")
@click.option("--tmin", type=float, default=2.0, show_default=True,
              help="Requests closer than this (s) belong to the same click.")
@click.option("--tmax", type=float, default=600.0, show_default=True,
              help="An idle time above this (s) ends the session.")
@click.option("--timeout", type=float, default=None,
              help="Also cut a session once it has lasted this long (s).")
@click.option("--embed-window", type=float, default=10.0, show_default=True,
              help="An image/style/script within this (s) of the previous request is embedded.")
@click.option("--keep-robots", is_flag=True, help="Keep robots (excluded by default).")
@click.option("--keep-query", is_flag=True, help="Keep query strings in URLs.")
@click.option("--base-month", default=None, metavar="YYYY-MM",
              help="Month and year for logs whose timestamps lack them (EPA).")
@click.option("--bootstrap", type=int, default=0, show_default=True,
              help="Parametric bootstrap replicates for p-values (0: off; it costs).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--plots", "plots_dir", default=None, metavar="DIR",
              help="Write a CDF + QQ plot per variable here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def fit_cmd(logs, output, fmt, identity, tmin, tmax, timeout, embed_window, keep_robots,
            keep_query, base_month, bootstrap, seed, plots_dir, as_json) -> None:
    """Fit a traffic model to access LOGS (plain, .gz, .bz2, .xz; '-' for stdin)."""
    try:
        rules = SessionRules(tmin=tmin, tmax=tmax, timeout=timeout, embed_window=embed_window,
                             identity=identity, keep_robots=keep_robots)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    options = FitOptions(fmt=fmt, keep_query=keep_query, base_month=base_month, rules=rules,
                         bootstrap=bootstrap, seed=seed)
    progress, bar = _progress_reader(list(logs))
    try:
        if bar is not None:
            with bar:
                result = fit_logs(logs, options, progress)
        else:
            result = fit_logs(logs, options, progress)
    except LogError as e:
        raise WagonError(str(e)) from None
    if result.sessions.counts["sessions"] == 0:
        raise WagonError("no session left to model (every client was a robot?)")
    try:
        save_model(result.model, output)
    except OSError as e:
        raise WagonError(f"cannot write {output}: {e.strerror or e}") from None
    plots = []
    if plots_dir:
        from .plots import write_plots
        try:
            plots = [str(p) for p in write_plots(result.fits, result.sessions.samples, plots_dir)]
        except OSError as e:
            raise WagonError(f"cannot write plots under {plots_dir}: {e.strerror or e}") from None
    if as_json:
        click.echo(json.dumps(_summary_json(result, output, plots), indent=1))
    else:
        click.echo(_summary_text(result, output, plots))
    for name, line, reason, text in result.stats.examples:
        click.echo(f"wagon: skipped {os.path.basename(name)}:{line} ({reason}): {text}", err=True)


def _load_model(path: str):
    from .model import ModelError, load_model
    try:
        return load_model(path)
    except ModelError as e:
        raise WagonError(str(e)) from None


@main.command("synth")
@click.argument("model")
@click.option("-o", "--output", default="scenario.jsonl", show_default=True)
@click.option("--duration", type=float, default=None, help="Seconds of arrivals to generate.")
@click.option("--sessions", type=int, default=None, help="Number of sessions to generate.")
@click.option("--rate", type=float, default=None, help="Sessions per second (default: the model's).")
@click.option("--rate-scale", type=float, default=1.0, show_default=True,
              help="Multiply the model's session rate.")
@click.option("--profile", default="constant", show_default=True,
              help="constant, steps:T=M,..., flash:at=T,duration=D,peak=P, "
                   "bursts:ratio=R,fraction=F,period=T.")
@click.option("--arrivals", type=click.Choice(["poisson", "renewal"]), default="poisson",
              show_default=True, help="Poisson, or the model's fitted inter-arrival law.")
@click.option("--classes", default=None,
              help="Client classes NETWORK/PROTOCOL:WEIGHT,... (see docs/synth.md).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--deterministic", is_flag=True, help="Every random variable replaced by its mean.")
@click.option("--speedup", type=float, default=1.0, show_default=True,
              help="Divide every time (arrivals, think times) by this.")
@click.option("--pages", type=int, default=1000, show_default=True,
              help="Pages of the Zipf site used when the model has no site.")
@click.option("--zipf", type=float, default=1.0, show_default=True,
              help="Zipf exponent of that site's page popularity.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def synth_cmd(model, output, duration, sessions, rate, rate_scale, profile, arrivals, classes,
              seed, deterministic, speedup, pages, zipf, as_json) -> None:
    """Write a scenario (JSON Lines) of sessions drawn from MODEL."""
    from synth import Generator, SynthError, SynthOptions, write_scenario
    from synth.classes import DEFAULT_CLASSES, ClassError
    from synth.profiles import ProfileError

    m = _load_model(model)
    opts = SynthOptions(duration=duration, sessions=sessions, rate=rate, rate_scale=rate_scale,
                        profile=profile, arrivals=arrivals, classes=classes or DEFAULT_CLASSES,
                        seed=seed, deterministic=deterministic, speedup=speedup, pages=pages,
                        zipf=zipf)
    try:
        gen = Generator(m, opts)
    except (SynthError, ClassError, ProfileError) as e:
        raise WagonError(str(e)) from None
    expected = sessions or int(duration * gen.rate * _mean_multiplier(gen))
    try:
        with open(output, "w") as out:
            if expected > 200_000:
                with click.progressbar(length=expected, label="sessions", file=sys.stderr) as bar:
                    summary = write_scenario(gen, out, os.path.basename(model), bar.update)
            else:
                summary = write_scenario(gen, out, os.path.basename(model))
    except OSError as e:
        raise WagonError(f"cannot write {output}: {e.strerror or e}") from None
    info = summary.as_dict()
    info.update(scenario=output, rate=gen.rate, speedup=speedup, deterministic=deterministic)
    if as_json:
        click.echo(json.dumps(info, indent=1))
        return
    note = []
    if speedup != 1:
        note.append(f"times divided by {speedup:g} (--speedup)")
    if deterministic:
        note.append("deterministic: every variable at its mean")
    click.echo(f"{output}: {info['sessions']:,} sessions, {info['clicks']:,} clicks, "
               f"{info['requests']:,} requests; base rate {gen.rate:.4g} sessions/s, "
               f"profile {profile}" + (f"; {'; '.join(note)}" if note else ""))
    rates, width = info["offered_requests_per_s"], info["bucket_s"]
    if rates:
        click.echo(f"offered requests/s per {width:.4g} s (at think-time offsets, before "
                   "transfer times):")
        shown = rates[:20]
        peak = max(shown) or 1
        for k, r in enumerate(shown):
            click.echo(f"  {k * width:>10.1f} s  {r:>10.2f}  {'#' * int(40 * r / peak)}")
        if len(rates) > 20:
            later = sum(rates[20:]) * width
            click.echo(f"  after {20 * width:.1f} s: {later:,.0f} more requests from sessions "
                       "still running")


def _mean_multiplier(gen) -> float:
    """Mean rate multiplier of the generator's profile over its horizon (progress estimate)."""
    o = gen.options
    return gen.profile.mean_multiplier(o.duration) if o.duration else 1.0


@main.group("site")
def site_group() -> None:
    """The modeled site."""


@site_group.command("build")
@click.argument("model")
@click.argument("outdir")
@click.option("--pages", type=int, default=1000, show_default=True,
              help="Pages of the Zipf site used when the model has no site.")
@click.option("--zipf", type=float, default=1.0, show_default=True)
def site_build_cmd(model, outdir, pages, zipf) -> None:
    """Write MODEL's site (pages of their size referencing their objects) under OUTDIR."""
    from synth.site import resolve_site
    from synth.sitebuild import build_site

    site = resolve_site(_load_model(model), pages, zipf)
    try:
        report = build_site(site, outdir)
    except OSError as e:
        raise WagonError(f"cannot write under {outdir}: {e.strerror or e}") from None
    skipped = ", ".join(f"{why} {n}" for why, n in report.skipped.items())
    click.echo(f"{outdir}: {report.pages:,} pages, {report.objects:,} objects, "
               f"{report.bytes / 1e6:.1f} MB"
               + (f"; {report.grown} pages larger than modeled (their links need more room)"
                  if report.grown else "")
               + (f"; skipped: {skipped}" if skipped else ""))


@main.command("export")
@click.argument("scenario")
@click.option("--to", "fmt", type=click.Choice(["httperf", "tsung", "clf"]), required=True)
@click.option("-o", "--output", required=True)
@click.option("--target", default="http://127.0.0.1:8080/", show_default=True,
              help="Server the httperf or Tsung run will load.")
@click.option("--max-sessions", type=int, default=None,
              help="Export only the first N sessions (Tsung: default 1000).")
@click.option("--start", "start_epoch", type=float, default=996624000.0, show_default=True,
              help="clf: Unix time of the scenario's time 0.")
def export_cmd(scenario, fmt, output, target, max_sessions, start_epoch) -> None:
    """Export SCENARIO to httperf (--wsesslog), Tsung XML or a Common Log Format log."""
    from synth.export import export_clf, export_httperf, export_tsung
    from synth.scenario import ScenarioError, read_scenario

    try:
        sc = read_scenario(scenario)
        with open(output, "w") as out:
            if fmt == "httperf":
                n = export_httperf(sc, out, target, max_sessions)
                what = f"{n:,} sessions"
            elif fmt == "tsung":
                n = export_tsung(sc, out, target, max_sessions or 1000)
                what = f"{n:,} sessions"
            else:
                n = export_clf(sc, out, start_epoch)
                what = f"{n:,} log lines"
    except ScenarioError as e:
        raise WagonError(str(e)) from None
    except OSError as e:
        raise WagonError(f"cannot write {output}: {e.strerror or e}") from None
    click.echo(f"{output}: {what} ({fmt})")


PROTOCOLS = "http10xK, http11, http11xK, pipeline or early-close"


@main.command("replay")
@click.argument("scenario")
@click.option("--target", required=True, help="The server: http://HOST:PORT/")
@click.option("--results", default=None, metavar="FILE",
              help="CSV of every request (and FILE's .pages.csv of every page).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Processes sharing the sessions (one per core).")
@click.option("--protocol", default=None, help=f"Override every class' protocol: {PROTOCOLS}.")
@click.option("--no-emulation", is_flag=True, help="No network delay or bandwidth emulation.")
@click.option("--connect-timeout", type=float, default=10.0, show_default=True)
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="Seconds to wait for a response.")
@click.option("--max-time", type=float, default=None, help="Stop after this many seconds.")
@click.option("--progress/--no-progress", default=None,
              help="Progress line on stderr (default: when stderr is a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def replay_cmd(scenario, target, results, workers, protocol, no_emulation, connect_timeout,
               timeout, max_time, progress, as_json) -> None:
    """Play SCENARIO against the server at --target and report what clients saw."""
    from replay import ReplayError, ReplayOptions, replay
    from replay.record import summary_text
    from replay.runner import estimate_connections, raise_nofile
    from synth.classes import ClassError, parse_protocol
    from synth.scenario import ScenarioError, read_scenario

    try:
        proto = parse_protocol(protocol) if protocol else None
        sc = read_scenario(scenario)
        limit = raise_nofile()
        need = estimate_connections(sc, proto)
    except ClassError as e:
        raise WagonError(f"--protocol: {e}") from None
    except ScenarioError as e:
        raise WagonError(str(e)) from None
    if need > limit * max(workers, 1):
        click.echo(f"wagon: this run would hold about {need:,} connections at its peak; the "
                   f"open-files limit is {limit:,} per process: expect 'too_many_open_files' "
                   "errors (use --workers, or raise the hard limit)", err=True)
    opts = ReplayOptions(target=target, results=results, workers=workers, protocol=protocol,
                         emulation=not no_emulation, connect_timeout=connect_timeout,
                         timeout=timeout, max_time=max_time,
                         progress=sys.stderr.isatty() if progress is None else progress)
    try:
        summary = replay(scenario, opts)
    except (ReplayError, ScenarioError) as e:
        raise WagonError(str(e)) from None
    except OSError as e:
        raise WagonError(f"cannot write results: {e.strerror or e}") from None
    click.echo(json.dumps(summary, indent=1) if as_json else summary_text(summary))


@main.command("serve")
@click.option("--model", default=None, help="Serve this model's site from memory.")
@click.option("--site", "site_dir", default=None, help="Serve the files under this directory.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8080, show_default=True)
@click.option("--max-connections", type=int, default=None,
              help="Connections served at once (others wait unread), like Apache's MaxClients.")
@click.option("--keepalive-timeout", type=float, default=75.0, show_default=True)
@click.option("--service-time", type=float, default=0.0, show_default=True,
              help="Seconds added to every request.")
@click.option("--pages", type=int, default=1000, show_default=True,
              help="Pages of the Zipf site used when the model has no site.")
@click.option("--zipf", type=float, default=1.0, show_default=True)
@click.option("--max-time", type=float, default=None, help="Stop after this many seconds.")
def serve_cmd(model, site_dir, host, port, max_connections, keepalive_timeout, service_time,
              pages, zipf, max_time) -> None:
    """Serve the modeled site (embedded aiohttp server)."""
    import asyncio

    from replay.server import make_app, serve
    from synth.site import resolve_site

    if (model is None) == (site_dir is None):
        raise WagonError("give exactly one of --model and --site")
    try:
        app = (make_app(resolve_site(_load_model(model), pages, zipf), service_time=service_time)
               if model else make_app(directory=site_dir, service_time=service_time))
    except FileNotFoundError as e:
        raise WagonError(str(e)) from None

    async def main_() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        import signal as _signal
        for sig in (_signal.SIGINT, _signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if max_time:
            loop.call_later(max_time, stop.set)
        await serve(app, host, port, max_connections, keepalive_timeout, stop,
                    ready=lambda p: click.echo(f"serving on http://{host}:{p}/", err=True))
    try:
        asyncio.run(main_())
    except OSError as e:
        raise WagonError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


@main.command("demo")
@click.option("--outdir", default="wagon-demo", show_default=True)
@click.option("--duration", type=float, default=120.0, show_default=True,
              help="Modeled seconds of session arrivals.")
@click.option("--speedup", type=float, default=10.0, show_default=True)
@click.option("--rate-scale", type=float, default=20.0, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
def demo_cmd(outdir, duration, speedup, rate_scale, seed) -> None:
    """Fit the bundled log, synthesize, serve, replay, report: the whole pipeline."""
    from .demo import DemoError, run_demo
    try:
        run_demo(outdir, duration, speedup, rate_scale, seed, echo=click.echo,
                 progress=sys.stderr.isatty())
    except DemoError as e:
        raise WagonError(str(e)) from None


def _workload(paths, fmt="auto", base_month=None):
    from .parse import LogError
    from .workload import WorkloadError, load_workload
    try:
        return load_workload(list(paths), fmt, base_month)
    except (WorkloadError, LogError) as e:
        raise WagonError(str(e)) from None


@main.command("hurst")
@click.argument("inputs", nargs=-1)
@click.option("--counts", "counts_file", default=None, metavar="FILE",
              help="A plain series of counts, one number per line.")
@click.option("--scales", default="0.01,0.1,1", show_default=True,
              help="Bin widths (s) at which requests are counted.")
@click.option("--format", "fmt", default="auto", show_default=True)
@click.option("--base-month", default=None, metavar="YYYY-MM")
@click.option("--json", "as_json", is_flag=True)
def hurst_cmd(inputs, counts_file, scales, fmt, base_month, as_json) -> None:
    """Hurst parameter of request counts of INPUTS (logs, a scenario or replay results)."""
    import numpy as np

    from .selfsim import counts_per_bin, hurst_all

    if (counts_file is None) == (not inputs):
        raise WagonError("give INPUTS or --counts FILE")
    series: list[tuple[str, object]] = []
    skipped = []
    if counts_file:
        try:
            series.append(("counts", np.loadtxt(counts_file, ndmin=1)))
        except (OSError, ValueError) as e:
            raise WagonError(f"{counts_file}: {e}") from None
    else:
        w = _workload(inputs, fmt, base_month)
        for width in (float(x) for x in scales.split(",")):
            if width < w.resolution:
                skipped.append(f"{width:g} s: finer than the input's {w.resolution:g} s timestamps")
                continue
            c = counts_per_bin(w.time, width)
            if len(c) < 256:
                skipped.append(f"{width:g} s: only {len(c)} bins (at least 256)")
                continue
            series.append((f"{width:g}s", c))
    out = []
    for label, c in series:
        try:
            estimates = hurst_all(c)
        except ValueError as e:
            skipped.append(f"{label}: {e}")
            continue
        out += [{"scale": label, "bins": len(c), **e.as_dict()} for e in estimates]
    if not out:
        raise WagonError("no series long enough to estimate: " + "; ".join(skipped))
    if as_json:
        click.echo(json.dumps({"estimates": out, "skipped": skipped}, indent=1))
        return
    click.echo(f"{'scale':>7s} {'bins':>8s}  {'estimator':20s} {'H':>7s}  {'95% CI':17s} fit range")
    for e in out:
        ci = f"[{e['ci'][0]:.3f}, {e['ci'][1]:.3f}]" if e["ci"] else ""
        click.echo(f"{e['scale']:>7s} {e['bins']:>8,}  {e['estimator']:20s} {e['H']:7.3f}  "
                   f"{ci:17s} {e['fit_range']}")
    for why in skipped:
        click.echo(f"skipped {why}", err=True)


@main.command("compare")
@click.argument("a")
@click.argument("b")
@click.option("--format", "fmt", default="auto", show_default=True, help="Format of log inputs.")
@click.option("--alpha", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="Level of the two-sample tests: p >= alpha is 'same'.")
@click.option("--tolerance", type=click.FloatRange(0, min_open=True), default=0.10,
              show_default=True, help="Relative difference still 'close' (half, absolute, for "
                                      "shares and exponents).")
@click.option("--json", "as_json", is_flag=True)
def compare_cmd(a, b, fmt, alpha, tolerance, as_json) -> None:
    """Compare workload B (log, scenario or replay results) against workload A."""
    from .compare import compare

    rows = compare(_workload([a], fmt), _workload([b], fmt), alpha, tolerance)
    if as_json:
        click.echo(json.dumps({"a": a, "b": b, "rows": rows}, indent=1, default=float))
        return
    click.echo(f"{'':34s} {'A':>12s} {'B':>12s}  {'p':>7s}  verdict")
    for r in rows:
        fa = "" if r["a"] is None else f"{r['a']:12.4g}"
        fb = "" if r["b"] is None else f"{r['b']:12.4g}"
        p = "" if r["p"] is None else f"{r['p']:7.3f}"
        click.echo(f"{r['row']:34s} {fa:>12s} {fb:>12s}  {p:>7s}  {r['verdict']}")


@main.group("advise")
def advise_group() -> None:
    """Advice from models."""


@advise_group.command("keepalive")
@click.option("--model", default=None, help="Take the think-time law and clicks from a model.")
@click.option("--think", default=None, help='A law, e.g. "lognormal(mu=3, sigma=1.1)".')
@click.option("--clicks-mean", type=float, default=None, help="E[N] (default: the model's, or 5).")
@click.option("--delta", type=float, default=None,
              help="Transfer-time gain of a persistent connection, s (E[X1] - E[X2]).")
@click.option("--x1", type=float, default=None, help="Mean transfer time on a new connection, s.")
@click.option("--x2", type=float, default=None, help="Mean transfer time when kept alive, s.")
@click.option("--servers", type=int, default=None, help="Server processes m (stability).")
@click.option("--json", "as_json", is_flag=True)
def advise_keepalive_cmd(model, think, clicks_mean, delta, x1, x2, servers, as_json) -> None:
    """Keep-alive timeout that minimises the work sessions bring (WAGON's queueing model)."""
    from .keepalive import LawSyntaxError, advise, parse_law

    if (model is None) == (think is None):
        raise WagonError("give exactly one of --model and --think")
    if model is not None:
        m = _load_model(model)
        var = m.variables.get("think")
        if var is None:
            raise WagonError(f"{model}: the model has no think-time law")
        law = var.frozen
        if clicks_mean is None and "clicks" in m.variables:
            clicks_mean = float(m.variables["clicks"].frozen.mean())
    else:
        try:
            law = parse_law(think)
        except LawSyntaxError as e:
            raise WagonError(str(e)) from None
    clicks_mean = clicks_mean or 5.0
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
        click.echo(json.dumps(a.as_dict(), indent=1))
        return
    click.echo(f"optimal keep-alive timeout: {a.optimal_timeout:.3f} s  (delta = {a.delta:.4g} s, "
               f"E[N] = {clicks_mean:.3g}, E[X1] = {x1:.4g} s, E[X2] = {x2:.4g} s)")
    click.echo(f"work per session E[W]: {a.work_at_optimum:.4g} s at the optimum, "
               f"{a.work_without_keepalive:.4g} s without keep-alive")
    if a.max_rate:
        for m_, rate in a.max_rate.items():
            click.echo(f"  stable with {m_} server process(es) while sessions arrive at < "
                       f"{rate:.4g}/s (lambda E[W] < m)")


@main.command("report")
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--output", default="report.html", show_default=True)
@click.option("--compare", "as_compare", is_flag=True, help="Compare the two INPUTS.")
@click.option("--format", "fmt", default="auto", show_default=True, help="Format of log inputs.")
def report_cmd(inputs, output, as_compare, fmt) -> None:
    """One self-contained HTML report of a model, a workload, or (--compare) two workloads."""
    from . import report

    if as_compare:
        if len(inputs) != 2:
            raise WagonError("--compare takes exactly two inputs")
        from .compare import compare
        a, b = _workload([inputs[0]], fmt), _workload([inputs[1]], fmt)
        page = report.compare_report(a, b, compare(a, b))
    elif inputs[0].endswith(".json"):
        page = report.model_report(_load_model(inputs[0]), f"wagon model: {inputs[0]}")
    else:
        page = report.workload_report(_workload(inputs, fmt))
    try:
        with open(output, "w") as f:
            f.write(page)
    except OSError as e:
        raise WagonError(f"cannot write {output}: {e.strerror or e}") from None
    click.echo(f"{output}: {len(page) / 1e3:,.0f} kB")


def _summary_json(result: FitResult, output: str, plots: list[str]) -> dict:
    st = result.stats
    return {
        "lines": st.lines, "parsed": st.parsed, "malformed": st.malformed_total,
        "malformed_by_reason": dict(st.malformed), "formats": st.formats,
        "sessions": result.sessions.counts["sessions"], "counts": result.sessions.counts,
        "variables": result.model.data["variables"],
        "skipped_variables": result.skipped,
        "arrivals": result.model.arrivals, "model": output, "plots": plots,
    }


def _summary_text(result: FitResult, output: str, plots: list[str]) -> str:
    from fitting.report import format_params

    st, c = result.stats, result.sessions.counts
    out = []
    for path, fmt in st.formats.items():
        out.append(f"{os.path.basename(path)}: format {fmt}")
    bad = ", ".join(f"{k} {v:,}" for k, v in st.malformed.most_common())
    out.append(f"lines {st.lines:,}  parsed {st.parsed:,}  malformed {st.malformed_total:,}"
               + (f" ({bad})" if bad else ""))
    out.append(f"clients {c['clients']:,}  robots {c['robot_clients']:,} "
               f"({c['robot_requests']:,} requests left out)  sessions {c['sessions']:,}  "
               f"clicks {c['clicks']:,}  embedded requests {c['embedded_requests']:,}")
    out.append("")
    out.append(f"{'variable':17s} {'n':>8s} {'law':18s} {'mean':>10s} {'λ²':>9s} {'W²':>8s} "
               f"{'A²':>9s}  parameters")
    for name, rep in result.fits.items():
        b = rep.best
        if b is None:
            out.append(f"{name:17s} {rep.n:>8,} no law could be fitted")
            continue
        out.append(f"{name:17s} {rep.n:>8,} {b.name:18s} {b.frozen.mean():>10.4g} "
                   f"{b.lambda2:>9.3g} {b.w2:>8.3g} {b.a2:>9.3g}  {format_params(b.params)}")
    for name, why in result.skipped.items():
        out.append(f"{name:17s} not fitted: {why}")
    a = result.model.arrivals
    if a:
        verdict = "Poisson" if a["poisson"] else ("renewal, not exponential" if a["renewal"]
                                                  else "not renewal (correlated gaps)")
        lb = "n/a" if a["ljung_box_p"] is None else f"{a['ljung_box_p']:.3g}"
        disp = " ".join(f"{k}={v:.2f}" for k, v in a["dispersion_index"].items())
        out.append("")
        out.append(f"session arrivals: {verdict}  (rate {a['rate_per_s']:.4g}/s, cv {a['cv']:.3g}, "
                   f"Ljung-Box p {lb}, |acf| > band at {a['acf_outside_band']}/{len(a['acf'])} "
                   f"lags, dispersion {disp or 'n/a'})")
    out.append("")
    out.append(f"model written to {output}" + (f"; plots in {os.path.dirname(plots[0])}"
                                               if plots else ""))
    return "\n".join(out)


if __name__ == "__main__":
    main()
