"""What every command shares: the lazy command group, one-line errors, option defaults."""
from __future__ import annotations

import dataclasses
import importlib

import click

from ..formats.kind import wrong_kind

__all__ = ["LazyGroup", "WagonError", "default", "not_wagon"]


class WagonError(click.ClickException):
    """A one-line error with exit status 2 (bad input, unreadable file)."""

    exit_code = 2


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


def default(options: type, name: str):
    """The default of field ``name`` of an options dataclass: defaults live there, once."""
    f = next(f for f in dataclasses.fields(options) if f.name == name)
    return f.default_factory() if f.default is dataclasses.MISSING else f.default
