"""The fitting half of ``fit_logs``: sessions to fitted variables, arrivals and the model
document (``fit_sessions``), and the pieces of it that other commands use. This is where the
modeling layer meets the fitting leaf (``wagon.fitting``, SciPy); ``wagon.modeling`` imports it
on first use, so that parsing and sessions never wait for SciPy.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone

import numpy as np

from .. import __version__
from ..fitting import FitReport, Observation
from ..fitting.arrivals import arrival_verdict
from ..fitting.report import (INTERVALS_SAID, NEAR_TIE, apply_bootstrap, bootstrap_tasks,
                              format_params)
from ..formats.model import MODEL_FORMAT, MODEL_VERSION, VARIABLES, Model, status_key
from ..formats.strict_json import json_ready
from ..logs.parse import ParseStats
from ..logs.sessions import Sessions, Site, View, extension_flags, think_edges
from ..logs.templates import ValueTally, split_key
from ..logs.windows import to_recorded
from .delays import delay_dependence, delay_quantiles, percentiles, think_dependence
from .options import FitOptions
from .params import value_laws
from .redirects import follow_targets, redirect_lines, redirects_json
from .statuses import move_statuses, status_shares
from .stages import (ArrivalTask, FitTask, LocalRunner, Progress, Runner, bootstrap_stage,
                     variable_stage)
from .urlspace import url_space, url_space_lines

__all__ = ["FitResult", "fit_sessions", "fit_samples", "build_model", "observations"]


#: the share of clicks beginning on an object above which a log looks sampled or filtered
#: (complete logs: NASA 3.3 %, EPA 0.8 %, netnea's 7.7 %; NASA keeping one line in 3: 33 %)
SAMPLED_SHARE = 0.25


def object_click_share(counts: dict) -> float:
    """The share of clicks that begin on an object (no page fetched before it) whose Referer
    names no page of the log (those that do are views of it from a cache: ``cached_views``)
    nor another site's (an image linked from elsewhere: ``linked_clicks``)."""
    lone = (counts["object_clicks"] - counts.get("cached_views", 0)
            - counts.get("linked_clicks", 0))
    return lone / counts["clicks"] if counts["clicks"] else 0.0


def looks_sampled(counts: dict) -> bool:
    """Whether so many clicks begin on an object with no page to name that pages are
    missing from the log."""
    return object_click_share(counts) > SAMPLED_SHARE


@dataclass
class FitResult:
    """What ``fit_logs`` found: the ``model``, the parse's ``stats``, the ``sessions`` the laws
    were fitted to, each variable's ``fits`` (a ``FitReport``) and the variables ``skipped``.

    Example:

    >>> result = wagon.fit_logs(["access_log.gz"])
    >>> result.stats.parsed, len(result.sessions.session_start), result.skipped
    (24540, 931, {})
    >>> result.fits["think"].best.name == result.model.variables["think"].law
    True
    """

    model: Model
    stats: ParseStats
    sessions: Sessions
    fits: dict[str, FitReport]
    skipped: dict[str, str]                  # variable → why it was not fitted

    def summary_json(self, output: str, plots: list[str]) -> dict:
        """What ``wagon fit --json`` prints."""
        st = self.stats
        return {"lines": st.lines, "parsed": st.parsed, "malformed": st.malformed_total,
                "malformed_by_reason": st.by_reason(), "skipped": st.skipped,
                "formats": st.formats, "long_urls": st.long_urls,
                "time_outliers": st.time_outliers, "duplicate_lines": st.duplicates,
                "shuffled_stamps": {p: s.as_dict() for p, s in st.shuffled.items()},
                "sessions": self.sessions.counts["sessions"], "counts": self.sessions.counts,
                "object_click_share": object_click_share(self.sessions.counts),
                "looks_sampled": looks_sampled(self.sessions.counts),
                "variables": self.model.data["variables"], "skipped_variables": self.skipped,
                "arrivals": self.model.arrivals, "url_space": self.model.data.get("url_space"),
                "delay_dependence": self.delay_dependence, "model": output, "plots": plots}

    @property
    def delay_dependence(self) -> dict | None:
        """How a click's delays go together, as the model keeps it (None: not kept)."""
        return (self.model.site.get("object_delays") or {}).get("dependence")

    def clients_text(self) -> str:
        """``clients 61  robots 1 (25 requests left out; robots.txt 1)``: the summary's words,
        and why a log left no session."""
        c = self.sessions.counts
        rules = ", ".join(f"{k} {v:,}" for k, v in c["robots_by_rule"].items())
        return (f"clients {c['clients']:,}  robots {c['robot_clients']:,} "
                f"({c['robot_requests']:,} requests left out" + (f"; {rules}" if rules else "")
                + ")")

    def summary_text(self, output: str, plots: list[str]) -> str:
        """What ``wagon fit`` prints: input counts, a line per variable (its chosen law's mean
        as recorded: inside the window, on the grid, as counts), the near ties, the arrival
        verdict."""
        st, c = self.stats, self.sessions.counts
        out = st.summary_lines()
        out.append(f"{self.clients_text()}  sessions {c['sessions']:,}  clicks {c['clicks']:,}  "
                   f"embedded requests {c['embedded_requests']:,}")
        out.append(f"clicks on objects {c['object_clicks']:,} (views of a page from a cache "
                   f"{c.get('cached_views', 0):,}, linked from other sites "
                   f"{c.get('linked_clicks', 0):,})  objects placed by referer "
                   f"{c['referer_attached']:,}  requests with a duration "
                   f"{c['with_duration']:,}  think times below tmin {c['think_below_tmin']:,}")
        out += template_lines(self.model.site) + redirect_lines(self.model.site)
        if looks_sampled(c):
            out.append(f"the log looks sampled or filtered: {100 * object_click_share(c):.0f} % "
                       "of its clicks begin on an object with no page before it nor in its "
                       "Referer, its own site's or another's (complete logs: a few %); the "
                       "pages they stand for are missing, and the model does not take those "
                       "objects for pages")
        w = self.sessions.windows
        if w is not None:
            span = w[-1, 1] - w[0, 0]
            out.append(f"the log was recorded in {len(w)} windows of about "
                       f"{np.median(w[:, 1] - w[:, 0]):.0f} s every "
                       f"{np.median(np.diff(w[:, 0])):.0f} s ({c['recorded_s']:,.0f} s of its "
                       f"{span:,.0f}-s span): the session arrivals are fitted in recorded time "
                       "(rates per second recorded)")
        out.append("")
        out.append(f"{'variable':17s} {'n':>8s} {'law':20s} {'mean':>10s} {'λ²':>9s} "
                   f"{'W²':>8s} {'A²':>9s} {'p(A²)':>7s}  parameters")
        for name, rep in self.fits.items():
            b = rep.best
            if b is None:
                out.append(f"{name:17s} {rep.n:>8,} no law could be fitted")
                continue
            p = "" if b.p_a2 is None else f"{b.p_a2:.3g}"
            out.append(f"{name:17s} {rep.n:>8,} {b.name:20s} {rep.law_mean:>10.4g} "
                       f"{b.lambda2:>9.3g} {b.w2:>8.3g} {b.a2:>9.3g} {p:>7s}  "
                       f"{format_params(b.params)}")
        out += [f"{name:17s} not fitted: {why}" for name, why in self.skipped.items()]
        ties = {name: rep.near_ties for name, rep in self.fits.items() if rep.near_ties}
        if ties:
            out.append(f"near ties (ΔBIC ≤ {NEAR_TIE:g} from the chosen law): " + "; ".join(
                f"{name} " + ", ".join(f"{law} {d:.3g}" for law, d in t.items())
                for name, t in ties.items()))
        out += self._interval_lines()
        if self.model.data.get("url_space"):
            out += ["", *url_space_lines(self.model.data["url_space"])]
        if self.model.arrivals:
            out += ["", "session arrivals: " + arrival_verdict(self.model.arrivals)]
        dep = self.delay_dependence
        if dep:
            lo, hi = dep["interval"]
            out.append(f"embedded requests of a click: Spearman {dep['spearman']:.3f} "
                       f"[{lo:.3f}, {hi:.3f}] between consecutive delays after their page "
                       f"({dep['clicks']:,} clicks, {dep['pairs']:,} pairs)")
        dep = self.model.data["variables"].get("think", {}).get("dependence")
        if dep:
            lo, hi = dep["interval"]
            out.append(f"think times of a session: Spearman {dep['spearman']:.3f} [{lo:.3f}, "
                       f"{hi:.3f}] between consecutive ones ({dep['sessions']:,} sessions, "
                       f"{dep['pairs']:,} pairs; synthesis draws them with one factor a "
                       f"session, copula rho {dep['rho']:.3f})")
        out.append("")
        out.append(f"model written to {output}" + (f"; plots in {os.path.dirname(plots[0])}"
                                                   if plots else ""))
        return "\n".join(out)


    def _interval_lines(self) -> list[str]:
        """The chosen laws' parameters with their standard errors and intervals, a table."""
        chosen = {name: rep.best for name, rep in self.fits.items()
                  if rep.best is not None and rep.best.uncertainty is not None}
        out = []
        for name, best in chosen.items():
            head, *rows = best.interval_table()
            if not out:
                out = ["", f"parameters of the chosen laws: {INTERVALS_SAID}",
                       f"{'variable':17s} {head}"]
            out += [f"{name if i == 0 else '':17s} {row}" for i, row in enumerate(rows)]
        return out


def template_lines(site: dict) -> list[str]:
    """What the summary says of the request templates (nothing for a site of plain pages):
    how many, the clicks' shares of other methods than GET and of queries, the laws."""
    pages = site.get("pages", [])
    dynamic = [p for p in pages if p.get("params") or p.get("method", "GET") != "GET"]
    clicks = sum(p.get("hits", 0) for p in pages)
    if not dynamic or not clicks:
        return []
    share = {what: 100 * sum(p.get("hits", 0) for p in pages if keep(p)) / clicks for what, keep
             in (("not GET", lambda p: p.get("method", "GET") != "GET"),
                 ("with a query", lambda p: "?" in p["url"]))}
    laws = Counter(law["law"] for p in pages for law in p.get("params", {}).values())
    return [f"templates {len(dynamic):,} of {len(pages):,} pages  clicks "
            + "  ".join(f"{k} {v:.1f} %" for k, v in share.items()) + "  parameters "
            + ", ".join(f"{k} {n}" for k, n in sorted(laws.items()))]


def _on_grid(x: np.ndarray, step: float, chunk: int = 1 << 20) -> bool:
    """Every value a multiple of ``step``, read a chunk at a time (a month's 6.7M think times
    at once left 300 MB of temporaries beside the fits' workers)."""
    return step > 0 and all(
        np.allclose(part / step, np.round(part / step), rtol=0, atol=1e-6)
        for part in (x[i:i + chunk] for i in range(0, len(x), chunk)))


def observations(sessions: Sessions) -> dict[str, Observation]:
    """How each sample of ``sessions`` was recorded: gaps between timestamps on the grid of the
    log's resolution (whole seconds, milliseconds, ... microseconds; ties are cells of it) or
    exact, think times kept only within the rules' [Tmin, Tmax], clicks ≥ 1, objects per page
    ≥ 0; sizes exact. A time sample off that grid — think times from a page's completion
    (start + a logged duration finer than the timestamps), starts of logs that record the end
    of a request — is taken as exact: its recording error of up to a cell is not modelled
    (docs/methods.md)."""
    r, rules, samples = sessions.resolution, sessions.rules, sessions.samples
    w = sessions.windows                # a log recorded in windows: no think outlasts one
    longest = 0.0 if w is None else float(np.max(w[:, 1] - w[:, 0]))
    tmax = min(rules.tmax, longest) if longest > rules.tmin else rules.tmax
    gaps, think = Observation.exact(), Observation.exact(rules.tmin, tmax)
    if _on_grid(samples.get("interarrival", np.zeros(0)), r):
        gaps = Observation.grid(r, lower=0.0)
    if _on_grid(samples.get("think", np.zeros(0)), r):
        think = Observation.grid(r, lower=rules.tmin, upper=tmax)
    return {"interarrival": gaps, "clicks": Observation.counts(1), "think": think,
            "page_size": Observation.exact(), "objects_per_page": Observation.counts(0),
            "object_size": Observation.exact()}


def fit_samples(samples: dict[str, np.ndarray], bootstrap: int = 0, seed: int = 0,
                observed: dict[str, Observation] | None = None, runner: Runner | None = None,
                progress: Progress | None = None, intervals: str = "best"
                ) -> tuple[dict[str, FitReport], dict[str, str]]:
    """Fit every model variable that has enough values, each by the likelihood of how it was
    recorded (``observed``; default: exact values, counts for the count variables); say why the
    others were skipped. The fits, then the bootstrap chunks, run as ``runner`` tasks.
    ``intervals``: whose parameters get standard errors and intervals (``fitting.fit``)."""
    fits, skipped, _ = _fit_variables(samples, bootstrap, seed, observed, runner, progress,
                                      intervals=intervals)
    return fits, skipped


#: views kept per page (the most frequent; docs/formats.md, "The site")
MAX_VIEWS = 16

_COST_RANK = {"grid": 0, "counts": 1, "exact": 2, "arrivals": 3}


def _kind(task: FitTask | ArrivalTask) -> str:
    return "arrivals" if isinstance(task, ArrivalTask) else task.observation.kind


def _fit_variables(samples: dict[str, np.ndarray], bootstrap: int, seed: int,
                   observed: dict[str, Observation] | None, runner: Runner | None,
                   progress: Progress | None, arrivals: ArrivalTask | None = None,
                   intervals: str = "best"
                   ) -> tuple[dict[str, FitReport], dict[str, str], dict]:
    """``fit_samples``, and with ``arrivals`` (more than one session start) the arrivals'
    report, as a task run first beside the fits (empty without). With a bootstrap every
    candidate gets intervals: the bootstrap's p-values may change the choice, here, where the
    samples no longer are."""
    runner = runner or LocalRunner()
    tasks: list[FitTask | ArrivalTask] = []
    skipped = {}
    if arrivals is not None and len(arrivals.starts) > 1:
        tasks.append(arrivals)
    for name, discrete in VARIABLES.items():
        values = samples.get(name, np.zeros(0))
        if len(values) < 2 or np.ptp(values) == 0:
            skipped[name] = (f"{len(values)} value(s)" if len(values) < 2
                             else f"all {len(values)} values equal {values.min():g}")
            continue
        obs = (observed or {}).get(name) or (Observation.counts() if discrete else Observation())
        tasks.append(FitTask(name, values, obs, "all" if bootstrap else intervals))
    # handed out longest first (grid likelihoods, then counts, exact values), so that no worker
    # is left with a long task at the end, but the arrival check last: its FFT, the stage's
    # largest memory (340 MB at 3.4M starts), then runs once the other workers are done with
    # their fits instead of beside one (a month: 1,086 MB against 908); the results come back
    # in task order
    order = sorted(range(len(tasks)), key=lambda i: _COST_RANK[_kind(tasks[i])])
    done = [None] * len(tasks)
    for i, r in zip(order, runner.map(variable_stage, [tasks[i] for i in order], "fit",
                                      progress)):
        done[i] = r
    checked = done.pop(0) if tasks and isinstance(tasks[0], ArrivalTask) else {}
    reports: list[FitReport] = done
    if bootstrap:
        chunks = [bootstrap_tasks(r, bootstrap, seed) for r in reports]
        results = iter(runner.map(bootstrap_stage, [t for c in chunks for t in c], "bootstrap",
                                  progress))
        for report, mine in zip(reports, chunks):
            apply_bootstrap(report, mine, [next(results) for _ in mine])
    return {r.name: r for r in reports}, skipped, checked


def _pages(sessions: Sessions, object_extensions: frozenset[str]) -> list[int]:
    """The clicked URLs that are pages, most clicked first: in a log that looks sampled, the
    objects that began clicks stand for pages the log lost, and are not pages themselves."""
    site = sessions.site
    assert site is not None
    urls = list(site.page_hits)
    if looks_sampled(sessions.counts) and urls:
        lost = extension_flags([site.urls[u] for u in urls], object_extensions)
        urls = [u for u, drop in zip(urls, lost) if not drop]
    return sorted(urls, key=lambda u: (-site.page_hits[u], site.urls[u]))


def _object(site: Site, u: int, laws: dict[str, dict]) -> dict:
    """An object of the model's site: its URL, size, method (a beacon's POST), laws, and
    ``follows`` when the log joined it to its click by Tmin alone (no object: a redirect's
    target, a frame), so that synthesis keeps it as close to the request before it."""
    method, url = split_key(site.urls[u])
    return ({"url": url, "size": site.object_size.get(u)}
            | ({"method": method} if method != "GET" else {})
            | ({"params": laws[site.urls[u]]} if site.urls[u] in laws else {})
            | ({"follows": True} if u in site.joined else {}))


def _site_json(sessions: Sessions, max_pages: int, variants: np.ndarray | None,
               object_extensions: frozenset[str] = frozenset(),
               values: ValueTally | None = None) -> dict:
    """The model's site: the ``max_pages`` most clicked pages (each with its method and its
    placeholders' laws, ``params``), their objects, entry counts and transitions; the other
    pages folded into ``remainder`` (see docs/formats.md)."""
    site = sessions.site
    assert site is not None
    ranked = _pages(sessions, object_extensions)
    pages, tail = ranked[:max_pages], ranked[max_pages:]
    page_index = {u: i for i, u in enumerate(pages)}
    views = {u: kept_views(site.page_views.get(u, [])) for u in pages}
    page_objects = {u: set(site.page_objects.get(u, [])).union(
        *(v.objects for v in views[u])) for u in pages}
    objects = sorted(set().union(*page_objects.values()), key=lambda u: site.urls[u])
    object_index = {u: i for i, u in enumerate(objects)}
    forms = {u: site.urls[u] for u in pages}         # page keys: status_key's names
    laws = value_laws(values or ValueTally(), {site.urls[u] for u in pages + objects}
                      | follow_targets(site, set(forms)))

    def page(u: int) -> dict:
        method, url = split_key(site.urls[u])
        entry = {"url": url, "size": site.page_size.get(u), "hits": site.page_hits[u],
                 "objects": sorted(object_index[o] for o in page_objects[u])}
        if method != "GET":
            entry["method"] = method
        if site.urls[u] in laws:
            entry["params"] = laws[site.urls[u]]
        if variants is not None and variants[u] > 1:
            entry["variants"] = int(variants[u])
        if "params" in entry or "variants" in entry:
            law = _size_law(site.page_size_rows, u)
            if law is not None:
                entry["sizes"] = law
        if views[u]:
            entry["views"] = [{"first": v.first, "repeat": v.repeat,
                               "objects": [object_index[o] for o in v.objects],
                               "revalidated": [i for i, r in enumerate(v.revalidated) if r],
                               "page_revalidated": v.page_revalidated}
                              | ({"page_absent": True} if v.page_absent else {})
                              for v in views[u]]
        return entry

    out = {
        "pages": [page(u) for u in pages],
        "objects": [_object(site, u, laws) for u in objects],
        "entry": sorted(([page_index[u], c] for u, c in site.entry.items() if u in page_index),
                        key=lambda e: (-e[1], e[0])),
        "transitions": sorted(([page_index[a], page_index[b], int(c)]
                               for a, b, c in site.transitions.tolist()
                               if a in page_index and b in page_index)),
    }
    thinks = transition_thinks(site.thinks, page_index, think_edges(sessions.rules))
    if thinks:
        out["thinks"] = thinks
    if tail:
        out["remainder"] = _remainder(site, tail, page_index)
    answers = move_statuses(site, page_index)
    if answers:
        out["move_statuses"] = answers
    redirects = redirects_json(site, forms, laws)
    if redirects:
        out["redirects"] = redirects
    if len(site.delays):
        out["object_delays"] = delay_quantiles(site.delays)
        dependence = delay_dependence(site.delay_pairs, out["object_delays"])
        if dependence is not None:
            out["object_delays"]["dependence"] = dependence
    return out


def _size_law(rows: np.ndarray, u: int) -> list[int] | None:
    """The percentiles 0..100 of the sizes of page ``u``'s complete responses, from (url,
    size, responses) rows sorted by URL: a template's concrete URLs (each attachment, each
    message) have sizes of their own; None when they have one size."""
    lo, hi = np.searchsorted(rows[:, 0], [u, u + 1]) if len(rows) else (0, 0)
    if hi - lo < 2:
        return None
    return percentiles(rows[lo:hi, 1], rows[lo:hi, 2]).tolist()


#: think times a transition needs to keep its own law (fewer: the global think law; 30 put
#: about 5 in each of the six or so bins a transition's thinks spread over)
MIN_THINKS = 30


def transition_thinks(rows: np.ndarray, page_index: dict[int, int], edges: np.ndarray
                      ) -> dict | None:
    """The model's ``site.thinks``: the bin edges (s) and, per transition between kept pages
    with at least MIN_THINKS think times, its counts per bin (the Customer Behavior Model
    Graph's think times), and ``rest``: the counts of every other move's (a transition with
    its own law takes its think times out of the global law's sample: the others' are what
    is left, not the whole); None when no transition has enough."""
    per: dict[tuple[int, int], np.ndarray] = {}
    every = np.zeros(len(edges) - 1, np.int64)
    for a, b, k, n in rows.tolist():
        every[k] += n
        if a in page_index and b in page_index:
            per.setdefault((page_index[a], page_index[b]), np.zeros(len(edges) - 1, np.int64))[k] += n
    kept = [[a, b, c.tolist()] for (a, b), c in sorted(per.items()) if c.sum() >= MIN_THINKS]
    if not kept:
        return None
    rest = every - np.sum([c for _, _, c in kept], axis=0)
    return ({"edges": [round(float(e), 6) for e in edges], "transitions": kept}
            | ({"rest": rest.tolist()} if rest.sum() else {}))


def kept_views(views: list[View], most: int = MAX_VIEWS) -> list[View]:
    """A page's ``most`` - 1 most frequent views and one for the others: the clicks of the
    others all go to the one of them whose number of requests (the page's, unless absent, and
    its embedded ones) is nearest their mean (the most frequent among equals), so that the
    page's requests per click stay those of the log to within rounding, its rare large views
    (a presentation's slides) included."""
    if len(views) <= most:
        return [replace(v) for v in views]
    tail = views[most - 1:]
    asked = np.array([len(v.objects) + (not v.page_absent) for v in tail])
    clicks = np.array([v.first + v.repeat for v in tail])
    standing = tail[int(np.argmin(np.abs(asked - asked @ clicks / clicks.sum())))]
    return [replace(v) for v in views[:most - 1]] + [
        replace(standing, first=sum(v.first for v in tail), repeat=sum(v.repeat for v in tail))]


def _remainder(site, tail: list[int], page_index: dict[int, int]) -> dict:
    """The pages past ``max_pages`` as one record: how many, their clicks as a frequency table
    (``hit_counts``: [clicks, pages with that many]) that keeps the popularity law, sessions
    that entered there, and the moves into (``from``), out of (``to``) and within it."""
    in_tail = set(tail)
    hits = np.array([site.page_hits[u] for u in tail])
    values, freq = np.unique(hits, return_counts=True)
    into: dict[int, int] = {}
    out_of: dict[int, int] = {}
    within = 0
    for a, b, c in site.transitions.tolist():
        if a in in_tail and b in in_tail:
            within += c
        elif b in in_tail and a in page_index:
            into[page_index[a]] = into.get(page_index[a], 0) + c
        elif a in in_tail and b in page_index:
            out_of[page_index[b]] = out_of.get(page_index[b], 0) + c
    sizes = [site.page_size[u] for u in tail if site.page_size.get(u)]
    return {"pages": len(tail), "hits": int(hits.sum()),
            "hit_counts": [[int(v), int(f)] for v, f in zip(values[::-1], freq[::-1])],
            "entry": int(sum(c for u, c in site.entry.items() if u in in_tail)),
            "from": sorted([p, c] for p, c in into.items()),
            "to": sorted([p, c] for p, c in out_of.items()),
            "within": int(within),
            "size": int(np.median(sizes)) if sizes else None}


def build_model(sessions: Sessions, fits: dict[str, FitReport], arrivals: dict,
                provenance: dict, max_pages: int = FitOptions.max_pages,
                variants: np.ndarray | None = None,
                object_extensions: frozenset[str] = frozenset(),
                values: ValueTally | None = None) -> Model:
    """Assemble the model document from sessions, fit reports and provenance
    (``object_extensions``: what a log that looks sampled does not take for pages;
    ``values``: what the placeholders took, for their laws)."""
    variables = {}
    for name, report in fits.items():
        entry = report.to_dict()
        entry["kind"] = report.best.mode if report.best else None
        variables[name] = entry
    dependence = think_dependence(sessions.site.think_pairs)
    if dependence is not None and variables.get("think", {}).get("best"):
        variables["think"]["dependence"] = dependence
    data = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "generator": f"wagon-workload {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "provenance": provenance,
        "variables": variables,
        "arrivals": arrivals,
        "site": _site_json(sessions, max_pages, variants, object_extensions, values),
        "url_space": url_space(sessions),
    }
    modeled = {status_key(e) for key in ("pages", "objects") for e in data["site"][key]}
    statuses = status_shares(sessions.site, modeled)
    if statuses:
        data["site"]["statuses"] = statuses
    if sessions.agents:
        data["agents"] = {"sessions": dict(sessions.agents)}
    return Model(json_ready(data))


def fit_sessions(sessions: Sessions, stats: ParseStats, variants: np.ndarray, span: float,
                 paths: list[str], options: FitOptions, runner: Runner,
                 progress: Progress | None = None, values: ValueTally | None = None
                 ) -> FitResult:
    """``fit_logs`` from its sessions on: the variables fitted (``runner`` tasks), the arrivals
    checked, the model assembled with its provenance (``values``: what the placeholders
    took)."""
    w = sessions.windows
    check = ArrivalTask(sessions.recorded_start if w is None else
                        to_recorded(sessions.recorded_start, w), sessions.resolution, options.seed)
    fits, skipped, arrivals = _fit_variables(sessions.samples, options.bootstrap, options.seed,
                                             observations(sessions), runner, progress, check,
                                             options.intervals)
    if w is not None:              # the arrivals' times, rate and profile are recorded time's
        arrivals["recorded"] = {"windows": w.tolist(), "seconds": float(np.sum(w[:, 1] - w[:, 0]))}
    rules = asdict(options.rules)
    rules["object_extensions"] = sorted(rules["object_extensions"])
    provenance = {
        "inputs": [{"name": os.path.basename(p) if p != "-" else "<stdin>",
                    "bytes": os.path.getsize(p) if p != "-" and os.path.exists(p) else None,
                    "format": stats.formats.get(p)} for p in paths],
        "options": {"format": options.fmt, "keep_query": options.keep_query,
                    "base_month": options.base_month, "bootstrap": options.bootstrap,
                    "intervals": options.intervals, "seed": options.seed, "client": options.client,
                    "keep_paths": options.keep_paths, "max_pages": options.max_pages,
                    "speedup": options.speedup, **rules},
        **{k: v for k, v in stats.as_dict().items() if k not in ("formats", "examples")},
        **sessions.counts,
        "distinct_urls": int(variants.sum()),
        "timestamp_resolution_s": sessions.resolution,
        "span_s": span,
        "skipped_variables": skipped,
    }
    model = build_model(sessions, fits, arrivals, provenance, options.max_pages,
                        None if options.keep_paths else variants,
                        options.rules.object_extensions, values)
    return FitResult(model, stats, sessions, fits, skipped)
