"""What every command shares: the lazy command group, one-line errors, option defaults."""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import math
from typing import Any, Iterator

import click

from ..cluster import ClusterSpec, connect
from ..lifeline import ScratchDir
from ..exits import EXIT_BAD_INPUT, EXIT_DISK_FULL, EXIT_INCOMPLETE
from ..formats.atomic import DISK_FULL
from ..formats.kind import wrong_kind

__all__ = ["LazyGroup", "WagonError", "DiskFull", "Interrupted", "cluster_client", "write_error", "default", "not_wagon",
           "Finite", "Given", "Count", "SEED", "tls_options"]


class Finite(click.FloatRange):
    """A float in a range, never NaN or infinite (click's FloatRange lets NaN through: every
    comparison with it is false)."""

    name = "finite float"

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


class Given(click.ParamType):
    """A string option that, when given, holds something: an empty value (an unset shell
    variable, --results "$OUT") is refused instead of being taken for the option's absence."""

    name = "text"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("an empty value" + (" (leave the option out to go without it)"
                                          if isinstance(param, click.Option) else ""), param, ctx)
        return value


def Count(low: int = 1, high: int = 10**12) -> click.IntRange:  # noqa: N802 (a type)
    """An integer option's range (both ends bounded)."""
    return click.IntRange(low, high)


#: every --seed: what NumPy's SeedSequence takes
SEED = click.IntRange(0, 2**63 - 1)


class WagonError(click.ClickException):
    """A one-line error with exit status 2 (bad input, unreadable file)."""

    exit_code = EXIT_BAD_INPUT


class Interrupted(click.ClickException):
    """Ctrl-C: the command stopped before its end, having written nothing half
    (files are written whole or not at all: ``formats.atomic``)."""

    exit_code = EXIT_INCOMPLETE


class DiskFull(click.ClickException):
    """A write that failed for want of room (disk, quota, file-size limit): exit status 6,
    apart from bad input."""

    exit_code = EXIT_DISK_FULL


def cannot_play(e: Exception) -> WagonError:
    """The one-line error of a replay that could not start or finish (``ReplayError``), with
    its exit status."""
    error = WagonError(str(e))
    error.exit_code = e.status
    return error


def write_error(what: str, e: OSError, kept: str = "what was there is unchanged"
                ) -> click.ClickException:
    """The one-line error of a failed write of ``what``: DiskFull when there was no room
    (``kept`` says what is left: by default the file as it was, as ``formats.atomic`` writes
    whole files), else WagonError."""
    if e.errno in DISK_FULL:
        return DiskFull(f"{what}: the disk is full ({e.strerror or e}); {kept}")
    return WagonError(f"cannot write {what}: {e.strerror or e}")


def not_wagon(paths: list[str], wanted: str) -> None:
    """Inputs that are no wagon file (access logs, a series of counts): a model, scenario or
    results file given there is named as such."""
    for p in paths:
        other = wrong_kind(p, wanted) if p != "-" else None
        if other:
            raise WagonError(other)


class LazyGroup(click.Group):
    """A group whose commands are ``name → (module, short help)``: a module is imported when its
    command is used, and the group's help is written from the short help alone."""

    def __init__(self, *args, commands: dict[str, tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = commands

    def invoke(self, ctx: click.Context):
        """Run the command; a full disk met anywhere is DiskFull, not a traceback; Ctrl-C
        is Interrupted, exit 5, as replay's cut (click said "Aborted!", exit 1)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted("interrupted: stopped before the end; no file was written "
                              "half") from None
        except OSError as e:
            if e.errno not in DISK_FULL:
                raise
            raise write_error(e.filename or "a file", e) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.lazy:
            return None
        module, short = self.lazy[name]
        cmd = importlib.import_module(module).command
        cmd.short_help = short
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, short) for name, (_, short) in self.lazy.items()])


@contextlib.contextmanager
def cluster_client(spec: ClusterSpec) -> Iterator[Any]:
    """``cluster.connect``, a LocalCluster's workers spilling to a scratch folder that dies
    with this process (``lifeline.ScratchDir``: a killed run left ``dask-scratch-space``)."""
    scratch = ScratchDir("wagon-dask-") if spec.local else None
    try:
        with connect(spec, scratch=scratch and scratch.path) as client:
            yield client
    finally:
        if scratch is not None:
            scratch.remove()


def default(options: type, name: str):
    """The default of field ``name`` of an options dataclass: defaults live there, once."""
    f = next(f for f in dataclasses.fields(options) if f.name == name)
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def tls_options(command):
    """--ca-file, --insecure and --tls-version, the options of an https:// target (wagon replay
    and wagon sweep)."""
    for option in (
            click.option("--tls-version", type=click.Choice(["1.2", "1.3"]), default=None,
                         help="HTTPS: the highest TLS version offered (default 1.3)."),
            click.option("--insecure", is_flag=True,
                         help="HTTPS: accept any certificate (as curl -k)."),
            click.option("--ca-file", type=Given(), default=None, metavar="PEM",
                         help="HTTPS: verify the server's certificate with these CAs "
                              "(default: the system's).")):
        command = option(command)
    return command
