"""The ``wagon`` command line: parse options, call the library, print.

Each command lives in a module of its own, imported only when that command runs (``LazyGroup``):
``wagon --help`` lists them from the short help below without importing NumPy or SciPy, which
keeps it instant."""
from __future__ import annotations

import atexit
import os
import signal
import sys

import click

from .. import __version__
from .common import LazyGroup

COMMANDS = {
    "fit": ("wagon.cli.fit", "Fit a traffic model to access logs."),
    "synth": ("wagon.cli.synth", "Write a scenario of sessions drawn from a model."),
    "site": ("wagon.cli.site", "The modeled site as files (site build)."),
    "export": ("wagon.cli.export", "Export a scenario to httperf, Tsung or a CLF log."),
    "replay": ("wagon.cli.replay", "Play a scenario against a server and report what clients saw."),
    "recover": ("wagon.cli.recover", "Finish a replay whose process was killed (its results)."),
    "sweep": ("wagon.cli.sweep", "Capacity curve: a scenario at increasing rates, the knee."),
    "experiment": ("wagon.cli.experiment", "A recipe's cells against the servers it starts."),
    "serve": ("wagon.cli.serve", "Serve a scenario's or a model's site (embedded server)."),
    "demo": ("wagon.cli.demo", "Fit, synthesize, serve, replay, report: the whole pipeline."),
    "hurst": ("wagon.cli.hurst", "Hurst parameter of request counts (logs, scenario, results)."),
    "compare": ("wagon.cli.compare", "Does workload B reproduce workload A?"),
    "advise": ("wagon.cli.advise", "Advice from models (advise keepalive)."),
    "report": ("wagon.cli.report", "One self-contained HTML report."),
}


@click.group(cls=LazyGroup, commands=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wagon")
def main() -> None:
    """wagon: model, synthesize and replay web workloads."""


#: BLAS on one thread unless the user says otherwise, set before NumPy loads: wagon's linear
#: algebra is small (eigenvalues of at most 300 x 300), its parallelism is processes (fit
#: workers, Dask workers; Dask's nanny sets the same), and OpenBLAS's threads cost more than
#: they give: each library (NumPy's and SciPy's) starts its threads when it loads, and in every
#: forked worker at its first call, and they spin ~0.1 s before they sleep (0.17 CPU-s of the
#: SciPy import, ~0.15 s in each fit worker, taken from the other workers on a small machine).
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def run() -> None:
    """The ``wagon`` program (console script, ``python -m wagon``): ``main`` with BLAS on one
    thread (``ONE_THREAD``), then, once Python has joined its threads and run its exit
    handlers, leave without tearing down the modules (after a fit, some 1,000 of them: 0.1 s
    spent freeing what the process hands back to the system anyway). ``main`` itself stays an
    ordinary click group for in-process callers."""
    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")
    terminate_as_interrupt()
    status = [1]                               # an exception that is not SystemExit: 1
    atexit.register(_leave, status)            # registered first, so it runs last
    try:
        main()
    except SystemExit as e:
        status[0] = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
        raise


def terminate_as_interrupt() -> None:
    """SIGTERM is Ctrl-C for this process (``KeyboardInterrupt``: exit 5 and one line, what a
    command does on SIGINT; Python's default was to die silently, status -15). A forked child
    (fit's pool workers, replay's workers) gets SIGTERM's default back: its parent ends it
    with SIGTERM, and a worker's own loop handles the signal where it wants to."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))


def _leave(status: list[int]) -> None:
    """Flush the standard streams and end the process with ``status`` (120 when a stream
    cannot be flushed, as Python does)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        os._exit(120)
    os._exit(status[0] & 0xFF)
