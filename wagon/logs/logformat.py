"""Apache ``LogFormat`` strings compiled into the literal/field sequence the parser walks.

A format is read as ``literal0 field1 literal1 ... fieldN literalN``: each field ends at the
first occurrence of the literal that follows it (the last one is anchored at the line end).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Field", "LogFormat", "FormatError", "compile_format", "NAMED_FORMATS", "resolve_format"]

class FormatError(ValueError):
    """A LogFormat string that cannot be parsed."""


#: time formats the vectorised timestamp decoders understand, keyed by Apache's strftime text
TIME_FORMATS = {
    "%d/%b/%Y:%H:%M:%S %z": "clf",
    "%d:%H:%M:%S": "epa",
    "sec": "epoch",
    "msec": "epoch_ms",
}

@dataclass(frozen=True)
class Field:
    """One ``%`` directive: what it holds (role) and, for times, how it is written."""

    directive: str
    role: str
    time_format: str | None = None


@dataclass(frozen=True)
class LogFormat:
    """A compiled format: ``len(literals) == len(fields) + 1``."""

    name: str
    spec: str
    literals: tuple[bytes, ...]
    fields: tuple[Field, ...]

    def has(self, role: str) -> bool:
        return any(f.role == role for f in self.fields)


_DIRECTIVE = re.compile(r"%(?:!?[0-9,]+)?([<>])?(?:\{([^}]*)\})?([a-zA-Z%])")

_HEADER_ROLES = {"referer": "referer", "user-agent": "agent"}


def _field_for(letter: str, arg: str | None) -> Field | str:
    """Map one directive to a Field, or to literal text for ``%%`` and ``%t``'s brackets."""
    directive = f"%{{{arg}}}{letter}" if arg is not None else f"%{letter}"
    if letter in "ha":
        return Field(directive, "host")
    if letter == "t":
        key = "%d/%b/%Y:%H:%M:%S %z" if arg is None else arg
        if key not in TIME_FORMATS:
            raise FormatError(f"unsupported time format {directive!r} "
                              f"(supported: %t, {', '.join('%{' + k + '}t' for k in TIME_FORMATS)})")
        return Field(directive, "time", TIME_FORMATS[key])
    if letter == "r":
        return Field(directive, "request")
    if letter == "s":
        return Field(directive, "status")
    if letter in "bB":
        return Field(directive, "size")
    if letter == "D":
        return Field(directive, "duration_us")
    if letter == "T" and arg in (None, "s"):
        return Field(directive, "duration_s")
    if letter == "T" and arg == "us":
        return Field(directive, "duration_us")
    if letter == "i" and arg is not None and arg.lower() in _HEADER_ROLES:
        return Field(directive, _HEADER_ROLES[arg.lower()])
    return Field(directive, "skip")


def compile_format(spec: str, name: str = "custom") -> LogFormat:
    """Compile an Apache LogFormat string; raise FormatError when it cannot be walked."""
    literals: list[bytes] = []
    fields: list[Field] = []
    text = ""
    pos = 0
    for m in _DIRECTIVE.finditer(spec):
        text += spec[pos:m.start()]
        pos = m.end()
        letter, arg = m.group(3), m.group(2)
        if letter == "%":
            text += "%"
            continue
        field = _field_for(letter, arg)
        assert isinstance(field, Field)
        bracketed = letter == "t" and arg is None
        if bracketed:
            text += "["
        if fields and not text:
            raise FormatError(f"{fields[-1].directive} and {field.directive} have nothing between "
                              "them; the parser needs a separator")
        literals.append(text.encode("latin-1"))
        fields.append(field)
        text = "]" if bracketed else ""
    text += spec[pos:]
    if "%" in text:
        raise FormatError(f"unknown directive in {text!r}")
    literals.append(text.encode("latin-1"))
    if not fields:
        raise FormatError(f"format {spec!r} has no % directives")
    roles = [f.role for f in fields]
    for role in ("time",):
        if role not in roles:
            raise FormatError(f"format {spec!r} has no time field (%t); sessions need one")
    if "host" not in roles:
        raise FormatError(f"format {spec!r} has no client field (%h or %a)")
    if "request" not in roles:
        raise FormatError(f"format {spec!r} has no request line (%r)")
    return LogFormat(name, spec, tuple(literals), tuple(fields))


_ROLE_PATTERNS = {
    "host": rb"(\S+)", "request": rb"(.*)", "status": rb"(\d{3})", "size": rb"(\d+|-)",
    "agent": rb"(.*)", "referer": rb"(.*?)", "duration_us": rb"(\d+)", "duration_s": rb"(\d+)",
    "skip": rb"(.*?)",
}
_TIME_PATTERNS = {
    "clf": rb"(\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})",
    "epa": rb"(\d\d:\d\d:\d\d:\d\d)", "epoch": rb"(\d+)", "epoch_ms": rb"(\d+)",
}


def line_regex(fmt: LogFormat) -> "re.Pattern[bytes]":
    """A backtracking regex for the same format, one group per field: the slow path for the rare
    lines the vectorised walk cannot split (a quote inside a request, say)."""
    parts = [re.escape(fmt.literals[0])]
    for f, lit in zip(fmt.fields, fmt.literals[1:]):
        parts.append(_TIME_PATTERNS[f.time_format] if f.role == "time" else _ROLE_PATTERNS[f.role])
        parts.append(re.escape(lit))
    return re.compile(b"".join(parts), re.S)


COMMON = '%h %l %u %t "%r" %>s %b'
NAMED_FORMATS: dict[str, str] = {
    "combined": COMMON + ' "%{Referer}i" "%{User-Agent}i"',
    "common": COMMON,
    "epa": '%h [%{%d:%H:%M:%S}t] "%r" %>s %b',
}


def resolve_format(name_or_spec: str) -> LogFormat:
    """A named format (common, combined, epa) or a LogFormat string containing ``%``."""
    if name_or_spec in NAMED_FORMATS:
        return compile_format(NAMED_FORMATS[name_or_spec], name_or_spec)
    if "%" in name_or_spec:
        return compile_format(name_or_spec)
    raise FormatError(f"unknown format {name_or_spec!r}: use auto, {', '.join(NAMED_FORMATS)} "
                      "or an Apache LogFormat string")
