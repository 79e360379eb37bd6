"""The model file: fitted laws, the site, arrival diagnostics and provenance, as versioned JSON.

The format only: reading, validating and writing a model document. It knows the catalogue of
laws (``wagon.fitting.laws``) to freeze and check parameters, and nothing of the pipeline that
fits them (``wagon.modeling``). A model never stores client hosts, addresses or user agents; URLs
lose their query strings unless the user asked to keep them (they carry tokens and addresses),
and identifiers in their paths become placeholders (``/user/{id}/profile``).

Version 2 adds, to the site, a page's ``variants`` (distinct logged URLs behind a templated page)
and the ``remainder`` (the pages past ``--max-pages``, folded into one record). Version 3 adds
``agents``: sessions per browser family (``{"sessions": {"firefox": 412, ...}}``), family names
only, never an agent string; and the parameters' standard errors and intervals (``se``, ``ci``,
``ci_method``, ``ci_note``, ``ci_bootstrap``). Version 5 adds the spliced law (``best``
``"spliced"``, its ``body``: knots, shares and the tail's end), and a variable's ``law_mean``
and ``near_ties``. Version 6 adds the site's ``statuses``: per URL of its pages and objects,
the share of its requests the logged server answered with each status other than 200 and 304
(``{"/a.html": {"404": 0.25}}``). Version 7 makes pages request templates: a page's
``method`` (``site.METHODS``, GET when absent) and ``params``, each placeholder of its URL
(``/item/{id}?q={q}``) with its value law (``int``, ``list`` of integers, ``token``, ``enum``,
``opaque``: never a raw value that may be a person's; ``wagon.modeling.params``; an object's
placeholders too, ``/api/items?ids={ids}``); ``site.statuses`` keys a page
of another method than GET as ``"POST /cart"`` (``status_key``); ``site.thinks`` holds the
think times of the transitions the log supports (counts per log-spaced bin). Version 8 adds
``site.redirects``: where each form's redirect sent the browser (the follow-up the sessions
leave out of the clicks), with its share, status, size and delay. Version 10 adds
``site.move_statuses``: how each form was answered on each move out of it (a login answered
200 when its user tried again, 303 when they went on). Files of earlier versions, without
them, read as before.
"""
from __future__ import annotations

import json
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..source import read_document
from .atomic import atomic_write
from .kind import MODEL_FORMAT, wrong_kind
from .site import (METHODS, PERCENTILES, STATUS_CODES, check_indices, check_size, check_url,
                   is_size_law, sums_to_one, template_pattern)
from .strict_json import dumps

if TYPE_CHECKING:
    from ..fitting.observation import Observation

__all__ = ["Model", "ModelError", "Variable", "load_model", "save_model", "validate",
           "VARIABLES", "MODEL_FORMAT", "MODEL_VERSION", "CI_METHODS", "DELAY_QUANTILES",
           "PARAM_LAWS", "PARAM_ALPHABETS", "LIST_SEPARATORS", "MAX_DISTINCT", "status_key"]

MODEL_VERSION = 11          # 2 adds, all optional (version 1 models are read as they are):
                            # site.pages[].variants, site.remainder, variables.*.observation,
                            # arrivals.profile; 3 adds, optional: agents.sessions,
                            # variables.*.se, ci, ci_method, ci_note, ci_bootstrap,
                            # bootstrap_replicates (and in their table rows); 4 adds, optional:
                            # site.pages[].views, site.object_delays, arrivals.process; 5
                            # adds: the law "spliced" with variables.*.body, optional
                            # variables.*.law_mean, near_ties (and table rows' refused, body);
                            # 6 adds, optional: url_space, site.statuses; 7 adds,
                            # optional: site.pages[].method, params, site.thinks,
                            # site.pages[].views[].page_absent, site.pages[].sizes; 8
                            # adds, optional: site.redirects; 9 adds, optional:
                            # variables.think.dependence; 10 adds, optional:
                            # site.move_statuses; 11 adds, optional: site.thinks.rest

#: a page parameter's laws and the fields each needs besides ``n`` (docs/formats.md)
PARAM_LAWS = {"int": ("min", "max", "distinct", "zipf"), "token": ("distinct", "zipf"),
              "enum": ("values",), "opaque": ("alphabet", "lengths"),
              "list": ("sep", "lengths", "min", "max", "distinct", "zipf")}
#: what separates a ``list`` parameter's integers (``ids=1,2,3``; ``%2C`` a comma escaped)
LIST_SEPARATORS = (",", "%2C", "%2c", ";", "|", "+", "%20")
#: distinct values of a parameter's law at most (what synthesis tabulates)
MAX_DISTINCT = 10_000_000
#: an ``opaque`` parameter's alphabets, smallest first ("email": ``<these>@example.invalid``)
PARAM_ALPHABETS = {"digits": "0123456789", "hex": "0123456789abcdef",
                   "alnum": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                   "base64url": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_",
                   "email": "0123456789abcdefghijklmnopqrstuvwxyz"}

#: percentiles 0..100 of each rank's delays in ``site.object_delays`` (and of a page's sizes)
DELAY_QUANTILES = PERCENTILES

#: how a parameter's interval was found (docs/methods.md, "Uncertainty of the parameters")
CI_METHODS = ("wald", "profile", "minimum", "fixed", "n/a")

#: the variables fitted, with whether they are integer counts
VARIABLES = {"interarrival": False, "clicks": True, "think": False, "page_size": False,
             "objects_per_page": True, "object_size": False}


class ModelError(ValueError):
    """A model file that is damaged, foreign or of an unknown version.

    Example:

    >>> with open("not-a-model.json", "w") as f:
    ...     _ = f.write('{"format": "something-else"}')
    >>> try:
    ...     wagon.load_model("not-a-model.json")
    ... except wagon.ModelError as e:
    ...     print(e)
    not-a-model.json: ...
    """


@dataclass
class Variable:
    """One fitted variable of a model: its chosen law, frozen, and the summary of its sample.

    Example:

    >>> think = wagon.load_model("model.json").variables["think"]
    >>> think.law, round(float(think.parent.mean()), 1), round(float(think.observed.mean()), 1)
    ('lognormal', 36.1, 35.7)
    """

    name: str
    law: str
    params: dict
    kind: str
    n: int
    mean: float
    observation: Observation | None = None      # how the sample was recorded (None: not said)
    se: dict = field(default_factory=dict)      # parameter → standard error (None: none)
    ci: dict = field(default_factory=dict)      # parameter → (lower, upper) 95 % (None: none)
    ci_method: dict = field(default_factory=dict)   # parameter → one of CI_METHODS
    ci_bootstrap: dict = field(default_factory=dict)    # parameter → percentile (lo, hi)
    body: dict | None = None                    # the spliced law's knots, shares and end

    @property
    def parent(self):
        """The fitted law itself, frozen (SciPy-like): what the data's true values follow
        before recording cut or rounded them (think times below Tmin included)."""
        return _law(self.law, self.body, self.params).freeze(self.params)

    @property
    def observed(self):
        """The law as its sample was recorded (``wagon.fitting.observed.Observed``): inside
        the truncation window, on the timestamps' grid, as integer counts; its ``latent`` is
        the law of the true values whose recording is kept (what synthesis draws)."""
        from ..fitting.observed import Observed  # lazy: SciPy, as _laws()
        obs = self.observation or _observation({"kind": "counts" if self.kind in (
            "discrete", "rounded") else "exact"})
        return Observed(self.parent, obs, self.kind, obs.support_min or (
            1 if self.name == "clicks" else 0))


@dataclass
class Model:
    """A loaded, validated model (``data`` is the JSON document).

    Example:

    >>> model = wagon.load_model("model.json")
    >>> sorted(model.variables)
    ['clicks', 'interarrival', 'object_size', 'objects_per_page', 'page_size', 'think']
    >>> model.variables["clicks"].law, model.arrivals["sessions"]
    ('...', 931)
    """

    data: dict
    path: str | None = None

    @property
    def variables(self) -> dict[str, Variable]:
        out = {}
        for name, v in self.data["variables"].items():
            if v.get("best"):
                obs = v.get("observation")
                out[name] = Variable(name, v["best"], v["params"], v.get("kind", "continuous"),
                                     v.get("n", 0), v.get("mean", math.nan),
                                     _observation(obs) if obs else None, dict(v.get("se", {})),
                                     _pairs(v.get("ci", {})), dict(v.get("ci_method", {})),
                                     _pairs(v.get("ci_bootstrap", {})), v.get("body"))
        return out

    @property
    def site(self) -> dict:
        return self.data.get("site", {})

    @property
    def arrivals(self) -> dict:
        return self.data.get("arrivals", {})

    @property
    def statuses(self) -> dict[str, dict[int, float]]:
        """URL → {status: share of its requests} for the site's URLs the logged server
        answered otherwise than with content (200, 304); {} before version 6."""
        return {u: {int(a): s for a, s in shares.items()}
                for u, shares in self.site.get("statuses", {}).items()}

    @property
    def move_statuses(self) -> dict[tuple[int, int | None], dict[int, float]]:
        """(form's page, next click's page or None for the session's end) → {status: share}
        of the form's answers on that move ({} before version 10, and where none was kept)."""
        return {(r["from"], r["to"]): {int(a): s for a, s in r["statuses"].items()}
                for r in self.site.get("move_statuses", [])}

    @property
    def agents(self) -> dict[str, float]:
        """Share of sessions per browser family ({} when the log recorded no agents)."""
        counts = self.data.get("agents", {}).get("sessions", {})
        total = sum(counts.values())
        return {f: c / total for f, c in counts.items() if c} if total else {}

    @property
    def provenance(self) -> dict:
        return self.data.get("provenance", {})


def status_key(page: dict) -> str:
    """How ``site.statuses`` names a page or object: its URL, after its method when that is
    not GET (``POST /cart``)."""
    method = page.get("method", "GET")
    return page["url"] if method == "GET" else f"{method} {page['url']}"


def _pairs(d: dict) -> dict:
    """[lower, upper] lists as tuples (null stays None; a null bound is an unbounded end)."""
    return {k: None if v is None else tuple(
        (-math.inf if i == 0 else math.inf) if b is None else b for i, b in enumerate(v))
        for k, v in d.items()}


def _laws() -> dict:
    """The catalogue of laws (``wagon.fitting.laws``): SciPy's, loaded when a model's variables
    are read or checked, not with this module (``wagon serve --scenario`` never needs it)."""
    from ..fitting.laws import LAWS  # lazy: SciPy costs 0.6 s, only models with laws need it
    return LAWS


def _law(name: str, body: object, params: dict):
    """The law called ``name`` (the spliced law of ``body``, with a tail when ``params`` give
    its shape): ValueError saying what is wrong with a body."""
    from ..fitting.spliced import SPLICED, body_law  # lazy: SciPy, as _laws()
    return body_law(body, "shape" in params) if name == SPLICED else _laws()[name]


def _observation(d: dict) -> Observation:
    from ..fitting.observation import Observation  # lazy: wagon.fitting's package loads SciPy
    return Observation.from_dict(d)


def save_model(model: Model, path: str | os.PathLike) -> None:
    """Write the model as indented JSON (complete or not at all: ``atomic``).

    Example:

    >>> model = wagon.load_model("model.json")         # or wagon.fit_logs(...).model
    >>> wagon.save_model(model, "copy.json")
    >>> wagon.load_model("copy.json").data == model.data
    True
    """
    with atomic_write(path) as f:
        f.write(dumps(model.data) + "\n")
    model.path = str(path)


def _check(cond: bool, path: str, what: str) -> None:
    if not cond:
        raise ModelError(f"{path}: not a valid wagon model: {what}")


def validate(data: object, path: str = "model") -> None:
    """Raise ModelError with a one-line reason when ``data`` is not a usable model document."""
    _check(isinstance(data, dict), path, "the top level is not a JSON object")
    assert isinstance(data, dict)
    _check(data.get("format") == MODEL_FORMAT, path, f"'format' is not {MODEL_FORMAT!r}")
    version = data.get("version")
    _check(type(version) is int and version >= 1, path, "'version' is missing or not ≥ 1")
    if version > MODEL_VERSION:
        raise ModelError(f"{path}: model version {version} is newer than this wagon reads "
                         f"({MODEL_VERSION}); upgrade wagon-workload")
    _check(isinstance(data.get("variables"), dict), path, "'variables' is missing or not an object")
    for key in ("site", "provenance"):          # optional: a hand-written model may omit them
        _check(isinstance(data.get(key, {}), dict), path, f"'{key}' is not an object")
    for name, v in data["variables"].items():
        _check(isinstance(v, dict), path, f"variable {name!r} is not an object")
        law = v.get("best")
        if law is None:
            continue
        known = (*_laws(), "spliced")
        _check(isinstance(law, str) and law in known, path,
               f"variable {name!r} has unknown law {law!r:.40}")
        params = v.get("params")
        _check(isinstance(params, dict) and all(_number(p) and math.isfinite(p) for p in
                                                params.values()),
               path, f"variable {name!r} has no finite numeric 'params'")
        try:
            with warnings.catch_warnings():     # SciPy's overflow warnings: the check says it
                warnings.simplefilter("ignore")
                mean = float(_law(law, v.get("body"), params).freeze(params).mean())
        except (TypeError, ValueError, ArithmeticError) as e:      # λ = 0: a division by 0
            raise ModelError(f"{path}: not a valid wagon model: variable {name!r}: bad "
                             f"parameters for {law}: {e}") from None
        _check(not math.isnan(mean), path, f"variable {name!r}: parameters out of range for {law}")
        _check(0 < mean < math.inf or name != "interarrival", path,   # synth divides by it
               f"variable 'interarrival': parameters out of range for {law}: a mean gap of "
               f"{mean:g} s")
        if v.get("observation") is not None:
            try:
                _observation(v["observation"])
            except ValueError as e:
                raise ModelError(f"{path}: not a valid wagon model: variable {name!r}: bad "
                                 f"'observation': {e}") from None
        _check_intervals(v, f"variable {name!r}", path)
        if "dependence" in v:
            _check_think_dependence(name, v["dependence"], path)
    _check_profile(data.get("arrivals", {}), path)
    _check_process(data.get("arrivals", {}), path)
    _check_recorded(data.get("arrivals", {}), path)
    _check_agents(data.get("agents", {}), path)
    _check_url_space(data.get("url_space"), path)
    site = data.get("site", {})
    pages, objects = site.get("pages", []), site.get("objects", [])
    _check(isinstance(pages, list) and isinstance(objects, list), path,
           "'site' 'pages' and 'objects' must be lists")
    for i, page in enumerate(pages):
        _check(isinstance(page, dict), path, f"site.pages[{i}] is not an object")
        _check_site_entry(page, f"site.pages[{i}]", path, len(objects))
        _check(_number(page.get("hits", 0)) and 0 <= page.get("hits", 0) < math.inf, path,
               f"site.pages[{i}].hits must be a count >= 0")
        _check(isinstance(page.get("variants", 1), int) and page.get("variants", 1) >= 1, path,
               f"page {i} has a bad 'variants'")
        _check_views(page, f"site.pages[{i}]", path)
        _check_template(page, f"site.pages[{i}]", path)
        _check_sizes(page.get("sizes"), f"site.pages[{i}]", path)
    for i, obj in enumerate(objects):
        _check(isinstance(obj, dict), path, f"site.objects[{i}] is not an object")
        _check_site_entry(obj, f"site.objects[{i}]", path)
        _check_template(obj, f"site.objects[{i}]", path)
        _check(isinstance(obj.get("follows", False), bool), path,
               f"site.objects[{i}].follows must be a boolean")
    _check_remainder(site.get("remainder"), len(pages), path)
    _check_delays(site.get("object_delays"), path)
    _check_statuses(site.get("statuses", {}), path)
    _check_move_statuses(site.get("move_statuses", []), len(pages), path)
    _check_thinks(site.get("thinks"), len(pages), path)
    _check_redirects(site.get("redirects", []), {status_key(p) for p in pages}, path)
    for key, width in (("entry", 2), ("transitions", 3)):
        _check(isinstance(site.get(key, []), list), path, f"site {key} is not a list")
        for row in site.get(key, []):
            _check(isinstance(row, list) and len(row) == width and
                   all(isinstance(v, int) and not isinstance(v, bool) for v in row)
                   and all(0 <= v < len(pages) for v in row[:width - 1]) and 0 <= row[-1] < 1 << 63,
                   path, f"site {key} row {row!r} is malformed")


def _check_site_entry(d: dict, where: str, path: str, objects: int | None = None) -> None:
    """A page or object of the model's site: its url, its size (optional: unknown when absent,
    null or 0) and, for a page, its objects (indices into ``objects`` of them)."""
    try:
        check_url(d, where)
        if d.get("size") is not None:
            check_size(d, where)
        if objects is not None:
            check_indices(d, "objects", where, objects, required=False)
    except ValueError as e:
        raise ModelError(f"{path}: not a valid wagon model: {e}") from None


def _check_template(page: dict, where: str, path: str) -> None:
    """A page's ``method`` and ``params`` (version 7, optional): a method of ``METHODS``; a
    law of ``PARAM_LAWS`` for placeholders of its URL, each with its fields."""
    _check(page.get("method", "GET") in METHODS, path,
           f"{where}.method must be one of {', '.join(METHODS)}")
    params = page.get("params", {})
    try:
        pattern = template_pattern(page["url"])
    except re.error:
        raise ModelError(f"{path}: not a valid wagon model: {where}.url names a placeholder "
                         "twice") from None
    names = set(pattern.groupindex) if pattern is not None else set()
    _check(isinstance(params, dict) and set(params) <= names, path,
           f"{where}.params must map placeholders of its URL to their laws")
    for name, law in params.items():
        ok = (isinstance(law, dict) and isinstance(law.get("law"), str)
              and law["law"] in PARAM_LAWS and _count(law.get("n"))
              and all(k in law for k in PARAM_LAWS[law["law"]]) and _param_ok(law))
        _check(ok, path, f"{where}.params.{name}: a law of {', '.join(PARAM_LAWS)} with its "
               "fields (docs/formats.md)")


def _param_ok(law: dict) -> bool:
    """A parameter law's fields in range."""
    kind = law["law"]
    zipf = _number(law.get("zipf", 0)) and 0 <= law.get("zipf", 0) < math.inf
    if kind == "list":
        return (law["sep"] in LIST_SEPARATORS and _lengths(law["lengths"])
                and _param_ok(dict(law, law="int")))
    if kind == "int":
        return (zipf and all(type(law[k]) is int and abs(law[k]) < 1 << 62 for k in ("min", "max"))
                and law["min"] <= law["max"] and _count(law["distinct"])
                and 1 <= law["distinct"] <= min(law["max"] - law["min"] + 1, MAX_DISTINCT))
    if kind == "token":
        return zipf and _count(law["distinct"]) and 1 <= law["distinct"] <= MAX_DISTINCT
    if kind == "opaque":
        return (isinstance(law["alphabet"], str) and law["alphabet"] in PARAM_ALPHABETS
                and _lengths(law["lengths"]))
    values, other = law["values"], law.get("other", {"share": 0, "distinct": 0})
    return (isinstance(values, dict) and len(values) > 0
            and all(isinstance(v, str) and v and _number(p) and 0 < p <= 1
                    for v, p in values.items())
            and isinstance(other, dict) and _number(other.get("share"))
            and _count(other.get("distinct")) and other["distinct"] <= MAX_DISTINCT
            and _number(other.get("zipf", 0)) and 0 <= other.get("zipf", 0) < math.inf
            and abs(sum(values.values()) + other["share"] - 1) < 1e-3)


def _lengths(rows: object) -> bool:
    """``[[length, count], …]``: lengths in 1..512, counts > 0, at least one row."""
    return _rows(rows, 2, -1) and len(rows) > 0 and all(0 < a <= 512 and b > 0
                                                         for a, b in rows)


def _count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 63


def _index(v: object) -> bool:
    """A position ≥ 0 (whether it exists is checked against its list)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_views(page: dict, where: str, path: str) -> None:
    """A page's ``views`` (version 4, optional): what its clicks fetched, each ``{"first",
    "repeat"}`` counts (not both 0), ``objects`` (the page's objects, in order, repeats
    allowed), ``revalidated`` (positions in ``objects``), ``page_revalidated`` and
    ``page_absent`` (version 7, optional: the page not asked for, so some object is)."""
    views = page.get("views", [])
    mine = set(page.get("objects", []))
    _check(isinstance(views, list), path, f"{where}.views is not a list")
    for k, v in enumerate(views):
        ok = (isinstance(v, dict) and _count(v.get("first")) and _count(v.get("repeat"))
              and isinstance(v.get("objects"), list) and all(_index(o) for o in v["objects"])
              and isinstance(v.get("revalidated", []), list)
              and all(_index(r) for r in v.get("revalidated", []))
              and isinstance(v.get("page_revalidated", False), bool)
              and isinstance(v.get("page_absent", False), bool))
        _check(ok, path, f"{where}.views[{k}] needs counts 'first' and 'repeat', 'objects' and "
               "'revalidated' lists of indices and booleans 'page_revalidated', 'page_absent'")
        _check(not v.get("page_absent") or (v["objects"] and not v.get("page_revalidated")),
               path, f"{where}.views[{k}] has its page absent and asks for no object, or "
               "revalidates the page it does not ask for")
        _check(v["first"] + v["repeat"] > 0, path, f"{where}.views[{k}] counts no click "
               "('first' and 'repeat' both 0)")
        _check(all(o in mine for o in v["objects"])
               and all(r < len(v["objects"]) for r in v.get("revalidated", [])), path,
               f"{where}.views[{k}] names an object or position that does not exist in its page")


def _check_sizes(sizes: object, where: str, path: str) -> None:
    """A page's ``sizes`` (version 7, optional): the percentiles of its concrete URLs' sizes
    (``is_size_law``)."""
    _check(sizes is None or is_size_law(sizes), path,
           f"{where}.sizes must be {PERCENTILES} sizes in bytes, in order")


def _check_delays(delays: object, path: str) -> None:
    """``site.object_delays`` (version 4, optional): per rank, DELAY_QUANTILES non-decreasing
    delays ≥ 0 (s) and a count of requests; optionally (version 5) how a click's delays go
    together (``dependence``: ``modeling.delays``)."""
    if delays is None:
        return
    q = delays.get("quantiles") if isinstance(delays, dict) else None
    n = delays.get("requests") if isinstance(delays, dict) else None
    ok = (isinstance(q, list) and isinstance(n, list) and len(q) > 0
          and all(_count(c) for c in n)
          and all(isinstance(r, list) and len(r) == DELAY_QUANTILES
                  and all(_number(x) and 0 <= x < math.inf for x in r) for r in q))
    _check(ok, path, f"site.object_delays needs, per rank, {DELAY_QUANTILES} delays >= 0 "
           "('quantiles') and a count ('requests')")
    _check(len(q) == len(n) and all(a <= b for r in q for a, b in zip(r, r[1:])), path,
           "site.object_delays: each rank's delays must be in order, with one count a rank "
           "(a rank that does not exist)")
    if "dependence" in delays:                  # present: an object (null is not "absent")
        _check(_dependence_ok(delays["dependence"], "clicks", 0.0), path,
               "site.object_delays.dependence needs spearman in [-1, 1] inside its interval, "
               "counts of clicks and pairs, and rho (optional) in [0, 1]")


def _dependence_ok(dep: object, groups: str, rho: float | None) -> bool:
    """A ``dependence`` (``modeling.delays``): Spearman's correlation in [-1, 1] inside its
    interval, counts of its ``groups`` and pairs, and ``rho`` in [0, 1] (absent: ``rho``,
    or refused when that is None)."""
    if not isinstance(dep, dict):
        return False
    spearman, ci, r = dep.get("spearman"), dep.get("interval"), dep.get("rho", rho)
    return (_number(spearman) and isinstance(ci, list) and len(ci) == 2
            and all(_number(x) for x in ci) and -1 <= ci[0] <= spearman <= ci[1] <= 1
            and _count(dep.get(groups)) and _count(dep.get("pairs"))
            and _number(r) and 0 <= r <= 1)


def _check_think_dependence(name: str, dep: object, path: str) -> None:
    """``variables.think.dependence`` (version 9, optional): Spearman's correlation of a
    session's consecutive think times in [-1, 1] inside its interval, counts of sessions and
    pairs, and the copula's ``rho`` in [0, 1] (``modeling.delays.think_dependence``)."""
    _check(name == "think", path, f"variable {name!r} cannot have a 'dependence' (think only)")
    _check(_dependence_ok(dep, "sessions", None), path,
           "variables.think.dependence needs spearman in [-1, 1] inside its interval, counts "
           "of sessions and pairs, and rho in [0, 1]")


def _check_statuses(statuses: object, path: str) -> None:
    """``site.statuses`` (version 6, optional): URL (``status_key``) → {status of
    ``STATUS_CODES`` as text: share > 0}, the shares of a URL summing to at most 1."""
    _check(isinstance(statuses, dict), path, "site.statuses is not an object")
    assert isinstance(statuses, dict)
    codes = {str(c) for c in STATUS_CODES}
    for url, shares in statuses.items():
        ok = (isinstance(url, str) and (url.partition(" ")[2] if url.partition(" ")[0]
                                        in METHODS else url).startswith("/")
              and isinstance(shares, dict)
              and all(a in codes and _number(v) and 0 < v <= 1 for a, v in shares.items())
              and sum(shares.values()) <= 1 + 1e-5)
        _check(ok, path, f"site.statuses[{url!r:.60}] must map statuses ({min(codes)}..."
               f"{max(codes)}, not 304) to shares in (0, 1] summing to at most 1")


def _check_move_statuses(rows: object, pages: int, path: str) -> None:
    """``site.move_statuses`` (version 10, optional): rows ``{"from": page, "to": page or
    null, "moves": n >= 1, "statuses": {...}}``, the statuses as ``site.statuses`` has them
    (an empty object: every one answered with content)."""
    _check(isinstance(rows, list), path, "site.move_statuses is not a list")
    assert isinstance(rows, list)
    codes = {str(c) for c in STATUS_CODES}
    for row in rows:
        ok = (isinstance(row, dict) and set(row) == {"from", "to", "moves", "statuses"}
              and _index(row["from"]) and row["from"] < pages
              and (row["to"] is None or _index(row["to"]) and row["to"] < pages)
              and _index(row["moves"]) and 1 <= row["moves"] < 1 << 63
              and isinstance(row["statuses"], dict)
              and all(a in codes and _number(v) and 0 < v <= 1
                      for a, v in row["statuses"].items())
              and sum(row["statuses"].values()) <= 1 + 1e-5)
        _check(ok, path, f"site.move_statuses row {str(row)[:80]} is malformed (from, to: "
               "page indices, to null for a session's end; moves >= 1; statuses as in "
               "site.statuses)")


def _check_thinks(thinks: object, pages: int, path: str) -> None:
    """``site.thinks`` (version 7, optional): bin ``edges`` > 0 (s) in order and rows
    ``[from page, to page, counts per bin]`` of existing pages, counting at least one;
    ``rest`` (version 11, optional): the other moves' counts per bin, at least one."""
    if thinks is None:
        return
    edges = thinks.get("edges") if isinstance(thinks, dict) else None
    rows = thinks.get("transitions") if isinstance(thinks, dict) else None
    ok = (isinstance(edges, list) and 2 <= len(edges) <= 1024
          and all(_number(e) and 0 < e < math.inf for e in edges) and isinstance(rows, list)
          and all(isinstance(r, list) and len(r) == 3 and _index(r[0]) and _index(r[1])
                  and isinstance(r[2], list) and all(_count(c) for c in r[2])
                  and sum(r[2]) > 0 for r in rows))
    _check(ok, path, "site.thinks needs 'edges' > 0 and 'transitions' rows [from page, to "
           "page, a count per bin]")
    _check(all(a < b for a, b in zip(edges, edges[1:])), path,
           "site.thinks: its edges must be in order")
    for r in rows:
        _check(len(r[2]) == len(edges) - 1, path,
               f"site.thinks row {r[:2]} is malformed: one count per bin")
        _check(r[0] < pages and r[1] < pages, path,
               f"site.thinks row {r[:2]} names a page that does not exist")
    rest = thinks.get("rest")
    _check(rest is None or (isinstance(rest, list) and len(rest) == len(edges) - 1
                            and all(_count(c) for c in rest) and sum(rest) > 0), path,
           "site.thinks.rest needs a count per bin, at least one")


def _check_redirects(redirects: object, forms: set[str], path: str) -> None:
    """``site.redirects`` (version 8, optional): rows ``{from: a page's status_key, requests,
    delay ≥ 0 (s), to: [{url, method (optional), share in (0, 1], requests, status, size,
    params (optional)}]}``, each form once, its shares summing to 1."""
    _check(isinstance(redirects, list), path, "site.redirects is not a list")
    assert isinstance(redirects, list)
    seen = set()
    for r in redirects:
        to = r.get("to") if isinstance(r, dict) else None
        ok = (isinstance(to, list) and to and r.get("from") in forms and r["from"] not in seen
              and _count(r.get("requests")) and _number(r.get("delay"))
              and 0 <= r["delay"] < math.inf
              and all(isinstance(t, dict) and _target_ok(t) for t in to)
              and sums_to_one([t["share"] for t in to]))
        _check(ok, path, f"site.redirects row {str(r)!r:.60} must name a page of the site "
               "once ('from'), with 'requests', a 'delay' >= 0 (s) and 'to': targets with a "
               "path 'url', a 'method', shares in (0, 1] summing to 1, 'requests', 'status' "
               "and 'size'")
        seen.add(r["from"])
        for k, t in enumerate(to):
            where = f"site.redirects[{r['from']!r:.40}].to[{k}]"
            _check_site_entry(t, where, path)
            _check_template(t, where, path)


def _target_ok(t: dict) -> bool:
    """A follow-up target of ``site.redirects``: its share, count, status and size (its URL,
    size range, method and laws: as a page's)."""
    return (_number(t.get("share")) and 0 < t["share"] <= 1 and _count(t.get("requests"))
            and _count(t.get("status")) and 100 <= t["status"] < 600 and _count(t.get("size")))


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _interval(v: object) -> bool:
    """[lower, upper]: numbers or null (an unbounded end), lower ≤ upper."""
    return (isinstance(v, list) and len(v) == 2 and all(b is None or _number(b) for b in v)
            and (None in v or v[0] <= v[1]))


def _check_intervals(v: dict, what: str, path: str) -> None:
    """The parameters' standard errors and intervals (version 3), where there are some: of
    the variable's parameters, standard errors ≥ 0 or null, intervals [lower, upper]."""
    params = v.get("params") or {}
    checks = (("se", lambda s: s is None or (_number(s) and s >= 0), "a number >= 0 or null"),
              ("ci", lambda c: c is None or _interval(c), "[lower, upper] or null"),
              ("ci_method", lambda m: m in CI_METHODS, f"one of {', '.join(CI_METHODS)}"),
              ("ci_note", lambda t: isinstance(t, str), "a string"),
              ("ci_bootstrap", _interval, "[lower, upper]"))
    for key, ok, expected in checks:
        values = v.get(key, {})
        _check(isinstance(values, dict) and set(values) <= set(params)
               and all(ok(x) for x in values.values()), path,
               f"{what}: '{key}' must map its parameters to {expected}")


def _rows(rows: object, width: int, pages: int) -> bool:
    """A list of ``width``-integer rows whose first value is a page index."""
    return isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == width and all(isinstance(v, int) and v >= 0 for v in r)
        and (pages < 0 or r[0] < pages) for r in rows)


def _check_remainder(rem: object, pages: int, path: str) -> None:
    """The site's remainder (version 2), when there is one."""
    if rem is None:
        return
    _check(isinstance(rem, dict), path, "site 'remainder' is not an object")
    assert isinstance(rem, dict)
    _check(isinstance(rem.get("pages"), int) and rem["pages"] >= 1, path,
           "site remainder has no 'pages' count")
    _check(_rows(rem.get("hit_counts", []), 2, -1), path,
           "site remainder 'hit_counts' must be [clicks, pages] rows")
    for key in ("from", "to"):
        _check(_rows(rem.get(key, []), 2, pages), path,
               f"site remainder '{key}' must be [page, count] rows of existing pages")
    for key in ("entry", "within", "hits"):
        _check(isinstance(rem.get(key, 0), int), path, f"site remainder '{key}' is not a count")


_FAMILY = re.compile(r"[a-z][a-z0-9-]{0,31}")


def _check_url_space(u: object, path: str) -> None:
    """``url_space`` (version 6, optional): per kind of URL, counts with ``once`` ≤ ``urls`` ≤
    ``references``; the fitted parts (``zipf``, ``size_rank``, ``growth``, ``locality``) are
    objects or null."""
    if u is None:
        return
    _check(isinstance(u, dict), path, "'url_space' is not an object")
    assert isinstance(u, dict)
    for kind in ("pages", "objects"):
        k = u.get(kind)
        _check(isinstance(k, dict) and all(_count(k.get(f)) for f in
                                           ("urls", "references", "once"))
               and k["once"] <= k["urls"] <= k["references"], path,
               f"url_space.{kind} needs counts once ≤ urls ≤ references")
        for part in ("zipf", "size_rank"):
            _check(isinstance(k.get(part), (dict, type(None))), path,
                   f"url_space.{kind}.{part} is not an object or null")
    for part in ("growth", "locality"):
        _check(isinstance(u.get(part), (dict, type(None))), path,
               f"url_space.{part} is not an object or null")


def _check_agents(agents: object, path: str) -> None:
    """``agents.sessions`` (optional): browser family names (never agent strings) → counts."""
    _check(isinstance(agents, dict), path, "'agents' is not an object")
    assert isinstance(agents, dict)
    sessions = agents.get("sessions", {})
    _check(isinstance(sessions, dict) and all(
        isinstance(f, str) and _FAMILY.fullmatch(f) and isinstance(c, int)
        and not isinstance(c, bool) and c >= 0 for f, c in sessions.items()), path,
        "'agents.sessions' must map browser family names (a-z, 0-9, -) to session counts")


def _check_profile(arrivals: object, path: str) -> None:
    """``arrivals.profile`` (optional): {"start", "bin_s" > 0, "counts": numbers ≥ 0}."""
    _check(isinstance(arrivals, dict), path, "'arrivals' is not an object")
    assert isinstance(arrivals, dict)
    profile = arrivals.get("profile")
    if profile is None:
        return
    ok = (isinstance(profile, dict) and _number(profile.get("bin_s"))
          and 0 < profile["bin_s"] < math.inf and isinstance(profile.get("counts"), list)
          and len(profile["counts"]) > 0
          and all(_number(c) and 0 <= c < math.inf for c in profile["counts"])
          and sum(profile["counts"]) > 0)
    _check(ok, path, "'arrivals.profile' needs bin_s > 0 and counts >= 0 (not all 0)")


def _check_process(arrivals: dict, path: str) -> None:
    """``arrivals.process`` (optional): a Hawkes process, mu > 0, 0 <= eta < 1, beta > 0,
    ``chosen`` true or false."""
    p = arrivals.get("process")
    if p is None:
        return
    ok = (isinstance(p, dict) and p.get("law") == "hawkes"
          and all(_number(p.get(k)) and 0 < p[k] < math.inf for k in ("mu", "beta"))
          and _number(p.get("eta")) and 0 <= p["eta"] < 1 and isinstance(p.get("chosen"), bool))
    _check(ok, path, "'arrivals.process' needs law 'hawkes', mu > 0, 0 <= eta < 1, beta > 0 "
                     "and chosen true or false")


def _check_recorded(arrivals: dict, path: str) -> None:
    """``arrivals.recorded`` (optional): the windows a log was recorded in, ``[start, end]``
    rows, each start before its end and at or after the end before it, and their ``seconds``."""
    r = arrivals.get("recorded")
    if r is None:
        return
    w = r.get("windows") if isinstance(r, dict) else None
    ok = (isinstance(w, list) and len(w) >= 2 and _number(r.get("seconds"))
          and all(isinstance(x, list) and len(x) == 2 and all(_number(v) and abs(v) < math.inf
                                                              for v in x) for x in w))
    _check(ok, path, "'arrivals.recorded' needs windows (two or more [start, end] rows of "
                     "finite numbers) and seconds")
    _check(all(a < b for a, b in w) and all(w[i][0] >= w[i - 1][1] for i in range(1, len(w)))
           and math.isclose(r["seconds"], sum(b - a for a, b in w), rel_tol=1e-9), path,
           "'arrivals.recorded' windows must be in order, each start before its end, not "
           "overlapping, their seconds summed")


def load_model(path: str | os.PathLike) -> Model:
    """Read and validate a model file; ModelError (one line) on a damaged or foreign file.

    Example:

    >>> model = wagon.load_model("model.json")             # as wagon fit writes it
    >>> model.variables["interarrival"].law               # gaps between sessions
    'spliced'
    """
    path = str(path)
    try:
        text = read_document(path, ModelError).decode()
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a wagon model (not text)") from None
    other = wrong_kind(path, "a wagon model")
    if other:
        raise ModelError(other)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelError(f"{path}: not a wagon model (JSON error at line {e.lineno}: {e.msg})") \
            from None
    validate(data, path)
    return Model(data, path)
