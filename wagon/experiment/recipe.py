"""Experiment recipes: a TOML file that says what server to start, what workload to play
against it, which of their settings to vary (the axes) and how often (repetitions).

A recipe has these tables (docs/experiments.md shows whole recipes)::

    [experiment]  name, repetitions, seed, duration, drain, pause, measures
    [workload]    model ("wagon" or a model file), rate, classes, arrivals, deterministic,
                  pages, speedup, steady; users (N > 0: a closed loop of N users instead)
    [server]      kind (apache, nginx, wagon), template (a config file), its parameters
    [replay]      network, protocol, workers, emulation, warmup, loss, topology (a file,
                  relative to the recipe's folder: shared links, Gilbert–Elliott losses),
                  connect_timeout (S-Client's T)
    [axes]        "TABLE.KEY" = [values …]: every combination is a cell; "topology.LINK.KEY"
                  sets KEY (queue_kb, rate, …) of replay.topology's link LINK
    [[plot]]      x, y (a measure or a list), series, title, logx, logy: a figure of the table

Every value an axis names must be settable in its table: an axis on ``server.KeepAliveTimeout``
varies that parameter of the server's configuration, one on ``server.kind`` the server itself.
"""
from __future__ import annotations

import itertools
import math
import os
from importlib import resources
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..formats.kind import wrong_kind
from ..formats.topology import LINK_KEYS, TopologyError, read_topology
from ..formats.limits import (MAX_PAGES, MAX_RATE, MAX_RUN_S, MAX_USERS, MAX_WORKERS,
                              SPEEDUP)
from ..source import read_toml
from ..replay.runner import NETWORK_MODES
from ..synth.options import ARRIVALS
from .servers import ServerError, resolve

__all__ = ["RecipeError", "Recipe", "Cell", "read_recipe", "locate", "shipped",
           "MEASURE_GROUPS", "set_repetitions"]


class RecipeError(ValueError):
    """A recipe that cannot be run (one line, naming the file and the key)."""


#: what a cell can measure; "hurst" costs a long cell, the others nothing extra
MEASURE_GROUPS = ("pages", "requests", "server", "generator", "hurst")

#: per table: key → (type, default); None: no default (the table's own rules apply)
TABLES: dict[str, dict[str, tuple[type | tuple[type, ...], Any]]] = {
    "experiment": {"name": (str, None), "title": (str, ""), "repetitions": (int, 3),
                   "seed": (int, 1), "duration": ((int, float), 60.0),
                   "drain": ((int, float), 30.0), "pause": ((int, float), 1.0),
                   "measures": (list, ["pages", "requests", "server", "generator"]),
                   "hurst_bin": ((int, float), 0.1), "paper": (str, "")},
    "workload": {"model": (str, "wagon"), "rate": ((int, float), 0.5),
                 "classes": (str, "lan/http11"), "arrivals": (str, "poisson"),
                 "deterministic": (bool, False), "pages": (int, 200),
                 "speedup": ((int, float), 1.0), "steady": (bool, False), "users": (int, 0)},
    "replay": {"network": (str, "client"), "protocol": (str, ""), "workers": (int, 1),
               "emulation": (bool, True), "warmup": ((int, float), 0.0),
               "loss": ((int, float), 0.0), "topology": (str, ""),
               "connect_timeout": ((int, float), 10.0)},
}
#: [server] keys that are not the server's own parameters
SERVER_KEYS = {"kind": (str, "wagon"), "template": (str, "")}
POSITIVE = {"experiment.repetitions", "experiment.duration", "experiment.hurst_bin",
            "workload.rate", "workload.pages", "workload.speedup", "replay.workers",
            "replay.connect_timeout"}
NOT_NEGATIVE = {"experiment.seed", "experiment.drain", "experiment.pause", "replay.warmup",
                "replay.loss", "workload.users"}
MAX_CELLS = 10_000
#: the keys of a topology's link an axis "topology.LINK.KEY" may set (one value a cell)
AXIS_LINK_KEYS = LINK_KEYS - {"name", "classes"}
CHOICES = {"workload.arrivals": ARRIVALS, "replay.network": NETWORK_MODES}
#: the highest value of a number (docs/experiments.md; ``formats.limits``)
AT_MOST = {"experiment.repetitions": MAX_CELLS, "experiment.seed": 2**63 - 1,
           "experiment.duration": MAX_RUN_S, "experiment.drain": MAX_RUN_S,
           "experiment.pause": MAX_RUN_S, "experiment.hurst_bin": MAX_RUN_S,
           "workload.rate": MAX_RATE, "workload.pages": MAX_PAGES,
           "workload.speedup": SPEEDUP[1], "workload.users": MAX_USERS,
           "replay.workers": MAX_WORKERS, "replay.warmup": MAX_RUN_S,
           "replay.connect_timeout": MAX_RUN_S}


@dataclass(frozen=True)
class Cell:
    """One combination of the axes' values, played ``repetitions`` times: its settings are the
    recipe's tables with the axes' values put in."""

    index: int
    axes: dict[str, Any]                    # "table.key" → this cell's value
    settings: dict[str, dict[str, Any]]     # table → key → value (server: kind, template, …)

    @property
    def topology_links(self) -> dict[str, dict[str, Any]]:
        """What the cell's axes set on its topology's links: link name → key → value."""
        out: dict[str, dict[str, Any]] = {}
        for name, value in self.settings["topology"].items():
            link, key = name.rsplit(".", 1)
            out.setdefault(link, {})[key] = value
        return out

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.axes.items()) or "the one cell"


@dataclass
class Recipe:
    """A read recipe: its tables with defaults filled in, its axes and plots."""

    path: Path
    tables: dict[str, dict[str, Any]]
    axes: dict[str, list]
    plots: list[dict] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.tables["experiment"]["name"]

    def cells(self, only: set[int] | None = None) -> list[Cell]:
        """Every combination of the axes' values, the first axis varying slowest (``only``:
        those whose index it holds)."""
        names = list(self.axes)
        out = []
        for k, values in enumerate(itertools.product(*(self.axes[n] for n in names))):
            if only is not None and k not in only:
                continue
            settings = {t: dict(v) for t, v in self.tables.items()}
            for name, value in zip(names, values):
                table, key = name.split(".", 1)
                settings[table][key] = value
            out.append(Cell(k, dict(zip(names, values)), settings))
        return out

    def resolve(self, value: str) -> Path:
        """A path the recipe gives, relative to the recipe's folder."""
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else self.path.parent / p


def shipped() -> dict[str, Path]:
    """The recipes wagon ships (``wagon.data``'s ``recipes/``), by name."""
    folder = Path(str(resources.files("wagon.data") / "recipes"))
    return {p.stem: p for p in sorted(folder.glob("*.toml"))}


def locate(text: str) -> Path:
    """A recipe file, or the name of a recipe wagon ships (``wagon-fig13``; a folder of that
    name, as its own run folder is, does not hide it)."""
    if os.path.exists(text) and not os.path.isdir(text) or os.sep in text or \
            text.endswith(".toml"):
        return Path(text)
    known = shipped()
    if text not in known:
        raise RecipeError(f"{text}: no such file, nor a recipe wagon ships ({', '.join(known)})")
    return known[text]


def read_recipe(path: str | os.PathLike) -> Recipe:
    """Read and check a recipe; RecipeError (one line) on anything it cannot run."""
    path = Path(path)
    other = wrong_kind(path, "a recipe")
    if other:
        raise RecipeError(other)
    doc = read_toml(path, RecipeError)
    unknown = set(doc) - {*TABLES, "server", "axes", "plot"}
    if unknown:
        raise RecipeError(f"{path}: unknown table [{sorted(unknown)[0]}] (the tables: "
                          f"{', '.join(sorted({*TABLES, 'server', 'axes', 'plot'}))})")
    tables = {name: _table(path, name, doc.get(name, {}), spec) for name, spec in TABLES.items()}
    if not tables["experiment"].get("name"):
        raise RecipeError(f"{path}: [experiment] needs a name")
    tables["server"] = _server(path, doc.get("server", {}))
    tables["topology"] = {}                 # set by axes on "topology.LINK.KEY" only
    for m in tables["experiment"]["measures"]:
        if m not in MEASURE_GROUPS:
            raise RecipeError(f"{path}: [experiment] measures: unknown {m!r} (the measures: "
                              f"{', '.join(MEASURE_GROUPS)})")
    axes = _axes(path, doc.get("axes", {}), tables)
    recipe = Recipe(path, tables, axes, _plots(path, doc.get("plot", [])))
    _check_runs(path, math.prod(len(v) for v in axes.values()),
                tables["experiment"]["repetitions"])
    for settings in (tables, *(cell.settings for cell in recipe.cells())):
        for table in TABLES:                 # a table's value too, where an axis replaces it
            for key, value in settings[table].items():
                _check_value(path, f"{table}.{key}", value)
    for cell in recipe.cells():
        srv = cell.settings["server"]
        try:
            resolve(srv["kind"], {k: v for k, v in srv.items() if k not in SERVER_KEYS})
        except ServerError as e:
            raise RecipeError(f"{path}: [server] {e}") from None
        topology = cell.settings["replay"]["topology"]
        if cell.topology_links and not topology:
            raise RecipeError(f"{path}: cell {cell.label}: an axis on topology.LINK.KEY needs "
                              "replay.topology, the file whose link it sets")
        if topology:
            try:
                read_topology(recipe.resolve(topology), cell.topology_links)
            except TopologyError as e:
                raise RecipeError(f"{path}: replay.topology: {e}") from None
        w, run = cell.settings["workload"], cell.settings["experiment"]
        if run["duration"] / w["speedup"] + run["drain"] > MAX_RUN_S:
            raise RecipeError(f"{path}: cell {cell.label}: duration / speedup + drain is more "
                              f"than {MAX_RUN_S:g} s")
        if w["users"] and (w["steady"] or w["deterministic"] or w["arrivals"] != "poisson"):
            raise RecipeError(f"{path}: workload.users (a closed loop) has no arrivals: drop "
                              "steady, deterministic and arrivals from its cells")
    return recipe


def set_repetitions(recipe: Recipe, n: int) -> None:
    """Play every cell of ``recipe`` ``n`` times (``wagon experiment --repetitions``), checked
    as the recipe's own key is."""
    _check_value(recipe.path, "experiment.repetitions", n)
    _check_runs(recipe.path, len(recipe.cells()), n)
    recipe.tables["experiment"]["repetitions"] = n


def _check_runs(path: Path, cells: int, repetitions: int) -> None:
    if cells * repetitions > MAX_CELLS:
        raise RecipeError(f"{path}: {cells} cells × {repetitions} repetitions is more than "
                          f"{MAX_CELLS:,} runs")


def _table(path: Path, name: str, given: Any, spec: dict) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise RecipeError(f"{path}: [{name}] must be a table")
    unknown = set(given) - set(spec)
    if unknown:
        raise RecipeError(f"{path}: [{name}] has no key {sorted(unknown)[0]!r} (its keys: "
                          f"{', '.join(spec)})")
    out = {}
    for key, (kind, default) in spec.items():
        value = given.get(key, default)
        if value is not None:
            _check_type(path, f"{name}.{key}", value, kind)
        out[key] = value
    return out


def _server(path: Path, given: Any) -> dict[str, Any]:
    """[server]: kind and template checked here, its parameters by the server's own rules when
    the experiment starts it (experiment.servers)."""
    if not isinstance(given, dict):
        raise RecipeError(f"{path}: [server] must be a table")
    out = {k: given.get(k, d) for k, (_, d) in SERVER_KEYS.items()}
    for k, (kind, _) in SERVER_KEYS.items():
        _check_type(path, f"server.{k}", out[k], kind)
    for k, v in given.items():
        if k not in SERVER_KEYS:
            if not isinstance(v, (str, int, float, bool)):
                raise RecipeError(f"{path}: server.{k} must be a number, a string or a boolean")
            out[k] = v
    return out


def _axes(path: Path, given: Any, tables: dict) -> dict[str, list]:
    if not isinstance(given, dict):
        raise RecipeError(f"{path}: [axes] must be a table of \"TABLE.KEY\" = [values]")
    out = {}
    for name, values in given.items():
        if isinstance(values, dict):        # an unquoted dotted key: server.X = [...]
            raise RecipeError(f"{path}: [axes] {name}: quote the axis' name, as "
                              f"\"{name}.{next(iter(values), 'KEY')}\" = [...]")
        table, _, key = name.partition(".")
        if table not in (*TABLES, "server", "topology") or not key:
            raise RecipeError(f"{path}: axis {name!r}: name it TABLE.KEY, TABLE one of "
                              f"{', '.join((*TABLES, 'server'))}, or topology.LINK.KEY")
        if table in TABLES and key not in TABLES[table]:
            raise RecipeError(f"{path}: axis {name!r}: [{table}] has no key {key!r}")
        if table == "topology" and ("." not in key or
                                    key.rsplit(".", 1)[1] not in AXIS_LINK_KEYS):
            raise RecipeError(f"{path}: axis {name!r}: name it topology.LINK.KEY, KEY one of "
                              f"{', '.join(sorted(AXIS_LINK_KEYS))}")
        if key == "name" or table == "experiment" and key in ("repetitions", "measures"):
            raise RecipeError(f"{path}: axis {name!r}: not a setting of a cell")
        if not isinstance(values, list) or not values:
            raise RecipeError(f"{path}: axis {name!r}: give a list of one or more values")
        if len({repr(v) for v in values}) != len(values):
            raise RecipeError(f"{path}: axis {name!r}: a value is repeated")
        spec = TABLES.get(table, SERVER_KEYS if table == "server" else {}).get(key)
        for v in values:
            if spec is not None:
                _check_type(path, name, v, spec[0])
            elif not isinstance(v, (str, int, float, bool)):
                raise RecipeError(f"{path}: axis {name!r}: {v!r} is not a number, a string "
                                  "or a boolean")
        out[name] = values
    return out


def _plots(path: Path, given: Any) -> list[dict]:
    if isinstance(given, dict):
        given = [given]
    if not isinstance(given, list) or not all(isinstance(p, dict) for p in given):
        raise RecipeError(f"{path}: [[plot]] must be tables (x, y, series, title)")
    out = []
    for p in given:
        unknown = set(p) - {"x", "y", "series", "title", "logx", "logy"}
        if unknown or "x" not in p or "y" not in p:
            raise RecipeError(f"{path}: a [[plot]] needs x and y (and may have series, title, "
                              "logx, logy)" + (f"; it has {sorted(unknown)[0]!r}" if unknown
                                               else ""))
        ys = p["y"] if isinstance(p["y"], list) else [p["y"]]
        if not all(isinstance(y, str) for y in ys) or not isinstance(p["x"], str):
            raise RecipeError(f"{path}: a [[plot]]'s x and y name columns of the table")
        out.append({"x": p["x"], "y": ys, "series": p.get("series"),
                    "title": p.get("title", ""), "logx": bool(p.get("logx", False)),
                    "logy": bool(p.get("logy", False))})
    return out


def _check_type(path: Path, name: str, value: Any, kind) -> None:
    numeric = kind in ((int, float), int)
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        what = {str: "a string", bool: "true or false", list: "a list", int: "an integer"}.get(
            kind, "a number")
        raise RecipeError(f"{path}: {name} must be {what} (got {value!r})")
    if numeric and not math.isfinite(value):
        raise RecipeError(f"{path}: {name} must be finite (got {value!r})")


def _check_value(path: Path, name: str, value: Any) -> None:
    if name in POSITIVE and not value > 0:
        raise RecipeError(f"{path}: {name} must be positive (got {value!r})")
    if name in NOT_NEGATIVE and value < 0:
        raise RecipeError(f"{path}: {name} must not be negative (got {value!r})")
    if name in AT_MOST and value > AT_MOST[name]:
        raise RecipeError(f"{path}: {name} must be at most {AT_MOST[name]:g} (got {value!r})")
    if name == "workload.speedup" and value < SPEEDUP[0]:
        raise RecipeError(f"{path}: {name} must be at least {SPEEDUP[0]:g} (got {value!r})")
    if name == "replay.loss" and value >= 1:
        raise RecipeError(f"{path}: {name} must be below 1 (got {value!r})")
    if name in CHOICES and value not in CHOICES[name]:
        raise RecipeError(f"{path}: {name} is one of {', '.join(CHOICES[name])} "
                          f"(got {value!r})")
