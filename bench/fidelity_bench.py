"""The log → model → synthetic traffic → compare loop (issue 35's acceptance test), per log and
per seed, through the command line with its defaults, as a researcher runs it:

    wagon fit LOG -o model.json                                   (once per log)
    wagon synth model.json --duration <the span of its session starts> --profile model --seed S
    wagon export scenario.jsonl --to combined --start <the log's first second>
    wagon compare LOG synthetic.log --json

and with ``--replay`` its other half, against a real server:

    wagon synth model.json ... --speedup K                        (the same sessions, K× faster)
    wagon site build SITE --scenario scenario-K.jsonl
    nginx serving SITE on a free loopback port, its log combined with $msec as the time
    wagon replay scenario-K.jsonl --target http://127.0.0.1:PORT/ --no-follow --no-emulation
    compare LOG with the server's own log, its times multiplied by K from the log's first second

The server is nginx unless its clock (a millisecond) times K would be coarser than a quarter
of the smallest octave measured (0.5 s: K > 500, netnea's month in 100 s): then Apache, whose
``%{usec_frac}t`` stamps to the microsecond. Each stamp is spread uniformly inside its tick
before it is multiplied (as ``wagon fit`` spreads a log's grid times): nginx's millisecond is
0.4 s at K = 400, and 0.4-s steps counted in whole seconds alias into burstiness at the finest
octave (NASA and EPA, 3 seeds each: +0.3 to +0.9 log₂ units at 2 s and acf(1) differing in 6
of 6, where their exports were −0.5 to −0.05 and differed in none). Each is stopped by its PID
(``wagon.experiment.servers.start``), whatever happens. K is ``--speedup``, by default the
log's span over ``--replay-seconds`` (100 s: each replay within 5 min) but at most
``--max-speedup`` (500: netnea's month is then a replay of 88 min): a request and its answer
take about a millisecond on loopback, K ms of the model's, and the replay's own timing must
stay finer than the second its requests are counted in and than Tmin, which tells a click's
requests from the next click (netnea's month in 100 s, K = 26,411: the octaves 2 s–1 h of its
replay 0.8–2.7 log₂ units low, its think time, acf(1) and Hurst differing; at K = 2,499,
1,056 s: a client's first gap 3 s where the export has 1, acf(1) of requests/s 0.345 against
the log's 0.296, differing in 3 of 3 seeds of an earlier run; at K = 1,250, 2,111 s: the first
gap 1 s, acf(1) 0.291, on the machine of 2026-11-29, but on another, whose processes wake
1–3 ms late from an idle wait (``bench/wakeup_bench.py``), exchanges of 2.4 ms at the 90th
percentile, 3 s of the log's: a form's follow-up past Tmin, 229 clicks read back from the 190
the export has, the Zipf slope of page popularity differing; at K = 500 and 250, 192). Each
replay prints its exchange times, its own p90 and p99, and K times them against Tmin, and
the clicks wagon reads back from the server's log against those synth made; redirects are
answers (``--no-follow``: the log holds the requests its clients
sent after one), no network is emulated (a modeled millisecond is K of the replay's).

A log recorded in windows (elastic's: the first minute of every hour) is a sample of its site's
time. Its model's time is recorded time (the windows end to end), and so is ``wagon compare``'s
reading of it (``wagon.analysis.logdigest``): each synthetic traffic, export and replay alike,
runs on in recorded time and is compared with the log's windows end to end, the energies and
correlations too; only the daily profile puts it back in the windows
(``wagon.logs.windows.from_recorded``), each hour's share of the requests being the clock's.
(Put back in the windows as a whole, a synthetic session longer than the time its window had
left went on in the next window, an hour later, where the log's recorder had cut its own
sessions at the window's end: 483–538 sessions split in two, the session rate differing in
every run, the run of 2026-11-28.)

A log whose stamps its publisher shuffled inside a unit (elastic's: each second redrawn inside
its minute, ``wagon.logs.shuffled``) is read by wagon in its lines' order, spread over their
minute; its synthetic export and its replay's server log are written as the publisher wrote
the log
(``shuffled_as_logged``: each line's second redrawn uniformly inside its minute of the log's
clock, the lines in order) before it is compared and measured: below the minute, the log's
stamps hold the shuffle, not its users' timing.

Printed per log and seed, for the export (and the replay): requests against the log's (the
requests the model was fitted on, robots left out), requests per click, the compare rows that
differ or are undecided, and measured here with NumPy and PyWavelets on the requests as parsed
(the log's but its robots', which a model leaves out, as ``wagon compare`` does):

- Swing's burstiness criterion: the wavelet energy of requests per second (log₂ of the mean
  squared Daubechies-3 detail coefficient) at every octave from 2 s to 2¹² s, synthetic minus
  log, with the log's 95 % interval half-width (χ² with n_j degrees of freedom: Abry & Veitch
  1998); an octave passes when the difference is within that interval or within 1 log₂ unit;
- the autocorrelation of requests per second at lags 1–10 s: the largest gap, synthetic − log;
- the daily profile: each hour of the day's share of the requests, the largest gap (points);
- the size tail: the 99th percentile of the sizes of 200 answers, synthetic / log;
- the statuses: the shares of 304, other 3xx, 404, other 4xx and 5xx, the largest gap
  (points);
- compare's stack-distance rows (lognormal μ of the LRU stack distance of requests);
- for a replay, its own count of requests (total, ok, failed, not started), its errors by
  kind and the machine's load: what never reached the server's log, and why;
- the range a request count over the log's span has by chance alone (printed per log): the
  total of a compound Poisson process of the log's own sessions (their number N, the requests
  r of each) has a coefficient of variation √(N·E[r²]) / (N·E[r]), multiplied by 1/(1 − η)
  when the model chose a Hawkes process (its count's variance is N/(1 − η)²); ±1.96 of it is
  where 95 % of the seeds of a perfect model fall.

    python bench/fidelity_bench.py [--seeds 1,2,3] [--log PATH ...] [--replay] [--plot PNG]
                                   [--json OUT]

``--plot`` draws each log's energy by octave with its 95 % interval beside each seed's
synthetic energy (docs/img/fidelity-energy.png); ``--json`` writes every run's figures, a line
each, as they come.

The duration is the span of the log's session starts (the model's rate profile), not of its
requests: sessions still running at the end are synthesized to their end, as the log has them.

The bundled logs (tests/data: NASA, EPA, elastic's Apache example; data/: the sample) are always
run; other public logs are given with --log (e.g. netnea's Apache example log: Apache-Labor/labor,
labor-07/labor-07-example-access.log, commit 1470b79; CC BY-NC-SA, not bundled).
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import numpy as np
import pywt
from scipy import special

from wagon import SessionRules, parse_bytes, sessionize
from wagon.analysis.compare import compare
from wagon.analysis.logdigest import load_digests
from wagon.analysis.options import CompareOptions
from wagon.experiment.servers import APACHE_TEMPLATE, NGINX_TEMPLATE, start
from wagon.logs.sessions import sessionize_kept
from wagon.logs.windows import from_recorded, to_recorded, widened
from wagon.synth.export import clf_timestamp

ROOT = Path(__file__).resolve().parents[1]
LOGS = [ROOT / "tests/data/nasa-aug95-morning.log.gz", ROOT / "tests/data/epa-http-aug95-half.log.gz",
        ROOT / "data/sample-combined.log.gz", ROOT / "tests/data/elastic-apache-may15.log.gz"]
OCTAVES = range(1, 13)              # 2 s .. 4096 s
LAGS = np.arange(1, 11)             # s
STATUS_CLASSES = {"304": lambda s: s == 304, "3xx": lambda s: (s // 100 == 3) & (s != 304),
                  "404": lambda s: s == 404, "4xx": lambda s: (s // 100 == 4) & (s != 404),
                  "5xx": lambda s: s // 100 == 5}
#: the finest time a server's clock times K may step by: a quarter of the smallest octave (2 s)
FINEST = 0.5
#: each server's clock tick (s) in the layouts below
CLOCK = {"nginx": 1e-3, "apache": 1e-6}
#: nginx and Apache as ``wagon experiment`` runs them, logging NCSA combined with an epoch stamp
#: (nginx's to the millisecond, Apache's to the microsecond), which the bench turns into CLF's
REPLAY_CONF = {
    "nginx": NGINX_TEMPLATE.replace(
        "log_format wagon '$msec $remote_addr $remote_port $connection $connection_requests '\n"
        "                   '$status $body_bytes_sent $request_time $request_uri';",
        "log_format wagon '$remote_addr - $remote_user [$msec] \"$request\" $status "
        "$body_bytes_sent \"$http_referer\" \"$http_user_agent\"';"),
    "apache": APACHE_TEMPLATE.replace(
        'LogFormat "%a %{remote}p %k %>s %B %D %{msec}t %X %U" wagon',
        'LogFormat "%a %l %u [%{sec}t.%{usec_frac}t] \\"%r\\" %>s %b \\"%{Referer}i\\" '
        '\\"%{User-Agent}i\\"" wagon')}
assert REPLAY_CONF["nginx"] != NGINX_TEMPLATE and REPLAY_CONF["apache"] != APACHE_TEMPLATE


def wagon(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "wagon", *args], capture_output=True, text=True)
    # a replay's failed threshold (4: errors > 1 %, the log's own 404s) is a finished run
    if out.returncode not in ((0, 1, 4) if args[0] == "replay" else (0, 1)):
        raise SystemExit(f"wagon {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def per_second(times: np.ndarray) -> np.ndarray:
    return np.bincount(np.floor(times - times.min()).astype(np.int64)).astype(float)


def energies(times: np.ndarray) -> dict[int, tuple[float, int]]:
    """(log₂ mean squared db3 detail, coefficients) of requests per second, per octave."""
    out, a = {}, per_second(times)
    for j in OCTAVES:
        if len(a) < 16:
            break
        d = pywt.downcoef("d", a, "db3", mode="periodization")
        a = pywt.downcoef("a", a, "db3", mode="periodization")
        out[j] = (float(np.log2(np.mean(d * d))), len(d))
    return out


def half_width(n: int) -> float:
    """95 % half-width of log₂ of a mean of n squared Gaussian coefficients (χ²ₙ/n)."""
    return 1.96 * float(np.sqrt(special.polygamma(1, n / 2))) / np.log(2)


def acf(times: np.ndarray) -> np.ndarray:
    """Autocorrelation of requests per second at LAGS."""
    x = per_second(times)
    x = x - x.mean()
    return np.array([np.dot(x[:-k], x[k:]) for k in LAGS]) / np.dot(x, x)


def hourly(times: np.ndarray) -> np.ndarray:
    """Each hour of the day's (UTC) share of the requests."""
    return np.bincount((np.floor(times / 3600) % 24).astype(np.int64), minlength=24) / len(times)


def status_shares(status: np.ndarray) -> dict[str, float]:
    return {k: float(np.mean(f(status))) for k, f in STATUS_CLASSES.items()}


def first_gap(times: np.ndarray, hosts: np.ndarray) -> float:
    """The median time (s) from a client's first request to its second: a page's to its first
    object's, mostly, in the log; in a replay at speedup K the server's own gap times K, so it
    shows the time the exchange itself took, multiplied (``--speedup`` too high for the log)."""
    order = np.lexsort((times, hosts))
    t, h = times[order], hosts[order]
    first = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    second = first + 1
    ok = second < len(t)
    ok[ok] &= h[second[ok]] == h[first[ok]]
    return float(np.median(t[second[ok]] - t[first[ok]])) if ok.any() else float("nan")


def measure(log, syn, syn_times: np.ndarray, rows: list[dict], log_requests: int,
            clicks: int, recorded: np.ndarray | None) -> dict:
    """The figures of one synthetic traffic (an export, or nginx's log of a replay with its
    times in modeled seconds) against its log (both parsed ``Requests``); a log ``recorded``
    in windows read in recorded time but for its daily profile (module docstring)."""
    clock = np.asarray(log.time, float)
    times, syn_clock = clock, syn_times
    if recorded is not None:            # the windows of the log's clicks, holding its requests
        recorded = widened(recorded, clock)
        times, syn_clock = to_recorded(clock, recorded), from_recorded(syn_times, recorded)
    e_log, e_syn = energies(times), energies(syn_times)
    ok = lambda s: np.asarray(s.status) == 200      # noqa: E731
    p99 = [np.percentile(np.asarray(r.size)[ok(r)], 99) for r in (log, syn)]
    shares = [status_shares(np.asarray(r.status)) for r in (log, syn)]
    stack = {r["row"]: r for r in rows if r["row"].startswith("stack distance")}
    return {"requests": len(syn_times), "ratio": len(syn_times) / log_requests,
            "per_click": len(syn_times) / max(clicks, 1),
            "differs": [r["row"] for r in rows if r["verdict"] == "differs"],
            "undecided": [r["row"] for r in rows if r["verdict"] == "undecided"],
            "octaves": {j: (e_syn[j][0] - e_log[j][0], half_width(e_log[j][1]))
                        for j in e_log if j in e_syn},
            "energy_log": e_log, "energy_syn": e_syn,
            "acf_log": acf(times).tolist(), "acf_gap": float(np.max(np.abs(
                acf(syn_times) - acf(times)))),
            "hour_gap": float(np.max(np.abs(hourly(syn_clock) - hourly(clock)))),
            "p99_ratio": float(p99[1] / p99[0]),
            "statuses": shares, "status_gap": max(abs(shares[1][k] - shares[0][k])
                                                  for k in STATUS_CLASSES),
            "stack_mu": [stack.get("stack distance: lognormal mu", {}).get(k)
                         for k in ("a", "b", "verdict")],
            "first_gap": [first_gap(t, np.asarray(r.host)) for t, r in ((times, log),
                                                                        (syn_times, syn))],
            "clicks": [clicks, sum(sessionize(syn).site.page_hits.values())]}


def exported(log: Path, model: Path, fit: dict, seed: int, work: Path, log_req,
             duration: float | None = None) -> dict:
    """fit → synth → export combined → compare (the CLI), measured; ``duration`` (s): the
    synthetic traffic's, the log's span by default."""
    scenario, synthetic = work / f"s{seed}.jsonl", work / f"s{seed}.log"
    synth = json.loads(wagon("synth", str(model), "--duration", f"{duration or span(fit):.0f}",
                             "--profile",
                             "model", "--seed", str(seed), "-o", str(scenario), "--force",
                             "--json"))
    wagon("export", str(scenario), "--to", "combined", "-o", str(synthetic), "--start",
          f"{np.floor(np.min(log_req.time)):.0f}")
    synthetic.write_bytes(shuffled_as_logged(synthetic.read_bytes(), fit, seed))
    rows = json.loads(wagon("compare", str(log), str(synthetic), "--json"))["rows"]
    syn, _ = parse_bytes(synthetic.read_bytes())
    return measure(log_req, syn, np.asarray(syn.time, float), rows,
                   fit["counts"]["requests_used"], synth.get("clicks", 0), windows(fit))


#: a line's time stamp: its first bracket (CLF's, or a server's epoch seconds)
STAMP = re.compile(rb"\[([^\]]+)\]")


def stamp_seconds(text: bytes) -> float:
    """Seconds since the epoch of a CLF stamp (``01/Aug/1995:00:00:01 +0000``) or an epoch
    one (nginx's ``$msec``, Apache's ``%{sec}t.%{usec_frac}t``)."""
    try:
        return float(text)
    except ValueError:
        return datetime.strptime(text.decode(), "%d/%b/%Y:%H:%M:%S %z").timestamp()


def stamps(data: bytes) -> np.ndarray:
    """Each line's time (its first bracket: an agent may hold more, ``[en]``), in seconds."""
    return np.array([stamp_seconds(STAMP.search(line).group(1)) for line in data.splitlines()])


def as_logged(data: bytes, t: np.ndarray) -> bytes:
    """A server's log (a stamp in brackets on each line) with its lines' times ``t`` written
    as CLF stamps."""
    lines = data.splitlines(keepends=True)
    found = [STAMP.search(line) for line in lines]
    return b"".join(line[:m.start()] + b"[" + clf_timestamp(u).encode() + b"]" + line[m.end():]
                    for line, m, u in zip(lines, found, t.tolist()))


def shuffled_as_logged(data: bytes, fit: dict, seed: int) -> bytes:
    """A synthetic log written as the log's publisher wrote the log, when ``wagon fit`` found
    its stamps shuffled inside a unit (``wagon.logs.shuffled``): each line's time redrawn
    uniformly inside its unit, the lines left in order; ``data`` itself otherwise."""
    shuffled = list(fit.get("shuffled_stamps", {}).values())
    if not shuffled:
        return data
    unit, w = shuffled[0]["unit_s"], windows(fit)
    t = stamps(data)
    clock = t if w is None else from_recorded(t, w)     # a synthetic log runs in recorded time
    clock = np.floor(clock / unit) * unit + np.random.default_rng(seed).uniform(0, unit, len(t))
    return as_logged(data, clock if w is None else to_recorded(clock, w))


def windows(fit: dict) -> np.ndarray | None:
    """The windows the log was recorded in (``wagon fit``'s ``arrivals.recorded``), or None."""
    recorded = fit["arrivals"].get("recorded")
    return np.asarray(recorded["windows"], float) if recorded else None


def replayed(log: Path, model: Path, fit: dict, seed: int, k: float, work: Path, log_req,
             first: float, duration: float | None = None) -> dict:
    """The same sessions K× faster, replayed against nginx (or Apache: module docstring)
    serving the built site; the server's log read back (times × K from ``first``, the log's
    first second) and measured, with the replay's exchange times (its own summary's, ms)."""
    scenario, site, run = work / f"r{seed}.jsonl", work / "site", work / "server"
    synth = json.loads(wagon("synth", str(model), "--duration", f"{duration or span(fit):.0f}",
                             "--profile",
                             "model", "--seed", str(seed), "--speedup", f"{k:g}", "-o",
                             str(scenario), "--force", "--json"))
    wagon("site", "build", str(site), "--scenario", str(scenario))
    kind = server_for(k)
    template = work / "server.conf.in"
    template.write_text(REPLAY_CONF[kind])
    work.chmod(0o755)                   # the server's workers (www-data) read the site
    with start(kind, {}, site, run, template=template) as server:
        summary = json.loads(wagon("replay", str(scenario), "--target", server.url,
                                   "--no-follow", "--no-emulation", "--json"))
        served = server.access_log.read_bytes()
    t = stamps(served)
    # each time spread uniformly inside its clock's tick, as wagon fit spreads a log's grid
    # times: K ticks of nginx's millisecond are 0.4 s at K = 400, which put in whole seconds
    # alias (two requests' seconds, then three) into burstiness at the finest octave
    tick = np.random.default_rng(seed).uniform(0.0, CLOCK[kind], len(t))
    data = shuffled_as_logged(as_logged(served, first + (t + tick - t.min()) * k), fit, seed)
    out = work / "server.log"
    out.write_bytes(data)
    rows = compare(*load_digests([str(log)], [str(out)]), CompareOptions())
    syn, _ = parse_bytes(data)
    r = measure(log_req, syn, np.asarray(syn.time, float), rows, fit["counts"]["requests_used"],
                synth.get("clicks", 0), windows(fit))
    said = summary["requests"]
    return {**r, "speedup": k, "server": kind, "replay_s": float(t.max() - t.min()),
            "replay_requests": {key: said[key] for key in ("total", "ok", "failed",
                                                          "not_started")},
            "errors": summary["errors"]["by_kind"], "load": summary["generator"]["machine"],
            "exchange_ms": {p: summary["latency"]["request_all"][p] for p in ("p50", "p90", "p99")}}


def server_for(k: float) -> str:
    """nginx, unless its millisecond clock times K is coarser than ``FINEST`` (then Apache)."""
    return "nginx" if k * 1e-3 <= FINEST else "apache"


def chance_range(log_req, fit: dict) -> float:
    """The 95 % half-width (a share) of a request count over the log's span by chance alone
    (module docstring), from the log's own sessions."""
    s = sessionize(log_req)
    r = np.bincount(s.click_session, 1 + s.samples["objects_per_page"])
    cv = np.sqrt(len(r) * np.mean(r ** 2)) / r.sum()
    process = fit["arrivals"].get("process") or {}
    return 1.96 * cv / ((1 - process["eta"]) if process.get("chosen") else 1.0)


def span(fit: dict) -> float:
    """The span of the log's session starts (recorded time for a log recorded in windows)."""
    a = fit["arrivals"]
    return a.get("span_s") or a["profile"]["bin_s"] * len(a["profile"]["counts"])


def plot(runs: list[dict], path: Path) -> None:
    """A panel per log: its energy by octave with the 95 % band, each seed's export (dashed)
    and replay (dotted)."""
    from matplotlib.figure import Figure
    logs = list(dict.fromkeys(r["log"] for r in runs))
    fig = Figure(figsize=(3.6 * len(logs), 3.4))
    for k, name in enumerate(logs):
        ax = fig.add_subplot(1, len(logs), k + 1)
        mine = [r for r in runs if r["log"] == name]
        e = mine[0]["export"]["energy_log"]
        j = np.array(sorted(e))
        y = np.array([e[i][0] for i in j])
        h = np.array([half_width(e[i][1]) for i in j])
        ax.fill_between(j, y - h, y + h, color="0.85", label="log, 95 %")
        ax.plot(j, y, "k-o", ms=3, label="log")
        for r in mine:
            for half, style in (("export", "--"), ("replay", ":")):
                if r.get(half):
                    s = r[half]["energy_syn"]
                    ax.plot(sorted(s), [s[i][0] for i in sorted(s)], style, lw=1,
                            label=f"{half}, seed {r['seed']}")
        ax.set_title(name.split(".")[0], fontsize=9)
        ax.set_xlabel("octave j (2^j s)")
        if k == 0:
            ax.set_ylabel("log2 energy of requests/s")
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def exchange(r: dict) -> str:
    """A replay's exchange times (its own p90 and p99, ms) and what K makes of them in the
    log's time, against Tmin: an exchange K× longer than Tmin splits a click in two."""
    k, ms = r["speedup"], r["exchange_ms"]
    return (f"exchange p90 {ms['p90']:.2f} ms, p99 {ms['p99']:.2f} ms: × K {k * ms['p90'] / 1e3:.2f}"
            f" and {k * ms['p99'] / 1e3:.2f} s of the log's (Tmin {SessionRules().tmin:g} s)")


def line(name: str, seed: int, half: str, r: dict, log_per_click: float) -> str:
    """One run's figures, as printed."""
    bad = [j for j, (d, h) in r["octaves"].items() if abs(d) > max(h, 1.0)]
    st = r["statuses"]
    return (f"{name:28s} seed {seed} {half:6s}: requests {r['ratio']:.3f}; per click "
            f"{r['per_click']:.2f} / {log_per_click:.2f}; energy Δlog2 "
            + " ".join(f"{j}:{d:+.2f}" for j, (d, _) in r["octaves"].items())
            + f"; octaves off {bad or 'none'}; acf 1-10 gap {r['acf_gap']:.3f}; hour gap "
            f"{100 * r['hour_gap']:.1f} pt; p99 size {r['p99_ratio']:.2f}; statuses "
            + " ".join(f"{k} {100 * st[1][k]:.2f}" for k in STATUS_CLASSES)
            + f" (gap {100 * r['status_gap']:.2f} pt); stack mu {r['stack_mu']}; a client's "
            f"first gap {r['first_gap'][1]:.2f} s / {r['first_gap'][0]:.2f} s; clicks read "
            f"{r['clicks'][1]:,} of {r['clicks'][0]:,} made\n"
            f"{'':28s}   differs: {', '.join(r['differs']) or 'none'}; undecided: "
            f"{', '.join(r['undecided']) or 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--log", action="append", default=[], type=Path)
    ap.add_argument("--replay", action="store_true", help="also the replay half, against nginx")
    ap.add_argument("--speedup", type=float, help="the replay's (default: span / --replay-seconds)")
    ap.add_argument("--replay-seconds", type=float, default=100.0)
    ap.add_argument("--max-speedup", type=float, default=500.0,
                    help="K at most this: an exchange's millisecond on loopback is K ms of the "
                         "model's (module docstring)")
    ap.add_argument("--plot", type=Path)
    ap.add_argument("--json", type=Path, help="every run's figures, a JSON line each")
    a = ap.parse_args()
    runs = []
    out = a.json.open("w") if a.json else None
    for log in LOGS + a.log:
        log_req, _ = parse_bytes(read(log))
        lines = len(log_req)
        log_req = log_req.take(np.flatnonzero(sessionize_kept(log_req)[1]))   # robots out, as fit
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp) / "model.json"
            fit = json.loads(wagon("fit", str(log), "-o", str(model), "--json"))
            counts = fit["counts"]
            log_per_click = counts["requests_used"] / counts["clicks"]
            k = a.speedup or min(max(1.0, round(span(fit) / a.replay_seconds)),
                                 round(span(fit) / np.ceil(span(fit) / a.max_speedup)))
            chance = chance_range(log_req, fit)
            print(f"{log.name}: {counts['requests_used']:,} requests fitted (of "
                  f"{lines:,} lines), span {span(fit):,.0f} s, per click "
                  f"{log_per_click:.2f}; a request count's 95 % range by chance alone "
                  f"±{100 * chance:.1f} %"
                  + (f"; replay at --speedup {k:g}" if a.replay else ""), flush=True)
            for seed in (int(s) for s in a.seeds.split(",")):
                work = Path(tempfile.mkdtemp(dir=tmp))
                r = {"log": log.name, "seed": seed, "log_requests": counts["requests_used"],
                     "log_per_click": log_per_click, "chance": chance,
                     "export": exported(log, model, fit, seed, work, log_req)}
                print(line(log.name, seed, "export", r["export"], log_per_click), flush=True)
                if a.replay:
                    first = float(np.floor(np.min(log_req.time)))
                    r["replay"] = replayed(log, model, fit, seed, k, work, log_req, first)
                    print(line(log.name, seed, "replay", r["replay"], log_per_click)
                          + f" [{r['replay']['replay_s']:.0f} s at --speedup {k:g} on "
                          f"{r['replay']['server']}; the replay's own count "
                          f"{r['replay']['replay_requests']}, errors {r['replay']['errors']}, "
                          f"load {r['replay']['load']['load_1min']:.1f}; "
                          + exchange(r["replay"]) + "]", flush=True)
                runs.append(r)
                if out:
                    out.write(json.dumps(r) + "\n")
                    out.flush()
    if a.plot:
        plot(runs, a.plot)


if __name__ == "__main__":
    main()
