"""The layout holds: one import package, dependencies in one direction, no cycles, no hidden
function-level imports, light start-up, and the bundled data as published.

The static checks read every module's imports with ``ast`` (the folders are mapped to their
package names as setup.cfg maps them); the runtime checks import a layer in a fresh interpreter
and look at ``sys.modules``."""
from __future__ import annotations

import ast
import functools
import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from wagon.cli import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"wagon": "wagon", "fitting": "wagon.fitting", "synth": "wagon.synth",
           "replay": "wagon.replay", "data": "wagon.data"}

#: lowest first; a module may import its own package's modules and anything of a lower layer;
#: packages of the same layer are independent of each other
LAYERS = [
    ["wagon.fitting"],
    ["wagon.source", "wagon.exits"],
    ["wagon.formats", "wagon.logs", "wagon.cluster", "wagon.lifeline"],
    ["wagon.modeling", "wagon.synth", "wagon.replay"],
    ["wagon.analysis"],
    ["wagon.experiment"],
    ["wagon.report"],
    ["wagon.demo"],
    ["wagon.cli", "wagon.samplelog"],
    ["wagon.__main__"],
]
LAZY_MARK = "# lazy:"          # a function-level import must say why (start-up time only)


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


@functools.cache
def _imports(name: str) -> list[tuple[str, int, bool, str]]:
    """(imported module, line, at module level, source line) of every import in ``name``."""
    path = MODULES[name]
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    base = name if _is_package(name) else name.rpartition(".")[0]
    inner = _in_functions(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
                mod = f"{pkg}.{node.module}" if node.module else pkg
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod
                       for a in node.names]
        else:
            continue
        for t in targets:
            out.append((t, node.lineno, id(node) not in inner, lines[node.lineno - 1]))
    return out


def _in_functions(tree: ast.Module) -> set[int]:
    """Ids of the nodes inside a function; the others are at module level (class bodies and
    if-blocks at the top count as module level)."""
    return {id(child) for parent in ast.walk(tree)
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for child in ast.walk(parent)}


def _layer(name: str) -> tuple[int, str] | None:
    for k, layer in enumerate(LAYERS):
        for prefix in layer:
            if name == prefix or name.startswith(prefix + "."):
                return k, prefix
    return None


def _internal(target: str) -> bool:
    return target == "wagon" or target.startswith("wagon.")


def test_every_module_is_in_a_layer():
    assert len(MODULES) > 40
    stray = [m for m in MODULES if m not in ("wagon", "wagon.data") and _layer(m) is None]
    assert not stray, f"modules outside the layers of this test: {stray}"


def test_dependencies_point_one_way():
    wrong = []
    for name in MODULES:
        me = _layer(name)
        for target, line, _, _ in _imports(name):
            if not _internal(target) or target in ("wagon", "wagon.data"):
                continue
            it = _layer(target)
            assert it is not None, f"{name}:{line} imports unknown module {target}"
            if me is None or it[0] > me[0] or (it[0] == me[0] and it[1] != me[1]):
                wrong.append(f"{name}:{line} imports {target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_the_package_init_imports_nothing_of_its_own():
    assert not [t for t, *_ in _imports("wagon") if _internal(t)]


def test_function_level_imports_say_why():
    hidden = [f"{name}:{line}: {src.strip()}" for name in MODULES
              for _, line, top, src in _imports(name) if not top and LAZY_MARK not in src]
    assert not hidden, "function-level imports without a '# lazy:' reason:\n" + "\n".join(hidden)


def test_no_import_cycles():
    graph = {m: {t for t, *_ in _imports(m) if t in MODULES and t != m} for m in MODULES}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v: str) -> None:                      # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))
    for m in graph:
        if m not in index:
            visit(m)
    assert not cycles, f"import cycles: {cycles}"


def _loaded(code: str) -> set[str]:
    """Top-level names of the modules a fresh interpreter holds after ``code``."""
    code += "\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


HEAVY = {"scipy", "statsmodels", "matplotlib", "pandas", "pyarrow"}


@pytest.mark.parametrize("code, absent", [
    ("import wagon", HEAVY | {"numpy", "wagon.fitting", "wagon.logs"}),
    ("import wagon.cli", HEAVY | {"numpy"}),
    # what a replay worker process imports: the CLI (its __main__) and the engine
    ("import wagon.cli, wagon.replay, wagon.replay.runner, wagon.replay.server",
     HEAVY | {"wagon.synth", "wagon.fitting", "wagon.logs", "wagon.modeling",
              "wagon.formats.model"}),
    ("import wagon.fitting", {"wagon.formats", "wagon.logs", "wagon.synth", "wagon.replay"}),
    ("import wagon.formats.model", {"wagon.logs", "wagon.modeling", "wagon.synth",
                                    "wagon.replay", "statsmodels", "matplotlib"}),
    ("import wagon.logs", HEAVY | {"wagon.fitting", "wagon.formats"}),
    # wagon fit forks its parse workers before SciPy is loaded, and loads it while they parse
    ("import wagon.cli.fit, wagon.modeling.processes", HEAVY | {"wagon.fitting"}),
    ("import wagon.synth, wagon.synth.export", {"wagon.logs", "wagon.modeling", "wagon.replay",
                                                "wagon.analysis", "statsmodels", "matplotlib"}),
    # the servers an experiment starts and samples: no laws, plots, tables or aiohttp
    ("import wagon.experiment.servers, wagon.experiment.status",
     HEAVY | {"aiohttp", "wagon.fitting", "wagon.modeling"}),
    # serving a scenario's site, building it, exporting a scenario: no law is read
    ("import wagon.cli.serve, wagon.cli.site, wagon.cli.export", HEAVY | {"wagon.fitting"}),
    # every command's help screen: what its module holds before the command runs
    ("import " + ", ".join(module for module, _ in COMMANDS.values()),
     HEAVY | {"pywt", "aiohttp"}),
])
def test_a_fresh_interpreter_loads_only_its_layer(code, absent):
    assert not _loaded(code) & absent


@pytest.mark.parametrize("name", ["fitting", "synth", "replay"])
def test_no_bare_top_level_packages(name):
    out = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                         text=True, cwd="/")
    assert out.returncode != 0 and f"No module named '{name}'" in out.stderr


@pytest.mark.parametrize("name, sha256", [
    ("nasa-aug95-morning.log.gz",
     "7667359ca1c3803308ec8161101b553a468121624556b0f43e50dad421bec65c"),
    ("epa-http-aug95-half.log.gz",
     "173c6daeec154dc58610e2f2efaa08d5a80a00c1db179b9981652c2b45ddb67c"),
    ("elastic-apache-may15.log.gz",
     "f15c31e905f86c7b4b6ab44aee74d0a2086dce89f010187d983edea7ef0364ef"),
    ("shop-access.log.gz", "0921fb26b70c7a957d687173bbd1724bb43b592446bb3cec3a58b9390e57ba43"),
])
def test_bundled_traces_are_the_published_bytes(name, sha256):
    data = gzip.decompress((ROOT / "tests" / "data" / name).read_bytes())
    assert hashlib.sha256(data).hexdigest() == sha256
    assert sha256 in (ROOT / "tests" / "data" / "README.md").read_text()
