"""Log layouts compiled into the literal/field sequence the parser walks.

A layout is read as ``literal0 field1 literal1 ... fieldN literalN``: each field ends at the
first occurrence of the literal that follows it (the last one is anchored at the line end). It
comes from an Apache ``LogFormat`` string (every mod_log_config directive is either read or
skipped as an opaque field), from an nginx ``log_format`` string (``$variables``), or from a
named preset. Each field has a role (client, time, request, status, size, duration, ...).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from .presets import AUTO_ORDER, FLAGS, PRESETS
from .timefmt import (ISO_TOKENS, NGINX_MSEC, TimeFormat, TimeFormatError, apache_time,
                      has_date, merged)

__all__ = ["Field", "LogFormat", "FormatError", "compile_format", "NAMED_FORMATS",
           "resolve_format", "named_format", "line_regex", "AUTO_CANDIDATES"]


class FormatError(ValueError):
    """A layout that cannot be parsed."""


@dataclass(frozen=True)
class Field:
    """One directive: what it holds (role); ``rank`` orders fields of one role (lowest wins:
    ``%b`` before ``%O``, ``%D`` before ``%T``); ``unit`` is seconds per unit of a duration."""

    directive: str
    role: str
    time: TimeFormat | None = None
    unit: float = 1.0
    rank: int = 0
    pad: bool = False          # may be preceded by padding spaces (Squid's ``%6tr``)
    fraction: bool = False     # a duration written with decimals (nginx's ``%.3f``)
    port: bool = False         # a client written address:port (load balancers, HAProxy)


@dataclass(frozen=True)
class LogFormat:
    """A compiled layout: ``len(literals) == len(fields) + 1``.

    Example:

    >>> fmt = wagon.compile_format('%h %l %u %t "%r" %>s %b "%{Referer}i"')
    >>> fmt.has("referer"), fmt.has("agent")
    (True, False)
    """

    name: str
    spec: str
    literals: tuple[bytes, ...]
    fields: tuple[Field, ...]

    def has(self, role: str) -> bool:
        return any(f.role == role for f in self.fields)


_DIRECTIVE = re.compile(r"%(?:!?[0-9,]+)?([<>])?(?:\{([^}]*)\})?(\^t[io]|\^FB|[a-zA-Z%])")
_NGINX_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")

#: every letter mod_log_config and the modules that extend it (mod_logio, mod_ssl) define
_OPAQUE = set("AClLfkPRunHXec") | {"^ti", "^to", "^FB", "x"}
_HEADERS = {"referer": "referer", "user-agent": "agent", "x-forwarded-for": "forwarded"}
_DURATION_UNITS = {None: (1.0, 2), "s": (1.0, 2), "ms": (1e-3, 1), "us": (1e-6, 0)}


def _apache_field(letter: str, arg: str | None) -> Field:
    """The Field of one Apache directive (FormatError for letters Apache does not define)."""
    directive = f"%{{{arg}}}{letter}" if arg is not None else f"%{letter}"
    low = (arg or "").lower()
    simple = {"h": "host", "a": "host", "r": "request", "s": "status", "m": "method",
              "U": "url", "q": "query", "v": "vhost", "V": "vhost", "p": "skip",
              "S": "size_total", "I": "size_in"}
    if letter in simple:
        return Field(directive, simple[letter])
    if letter == "t":
        try:
            return Field(directive, "time", apache_time(arg))
        except TimeFormatError as e:
            raise FormatError(str(e)) from None
    if letter in "bB":
        return Field(directive, "size", rank=0)
    if letter == "O":
        return Field(directive, "size", rank=1)
    if letter == "D":
        return Field(directive, "duration", unit=1e-6, rank=0)
    if letter == "T":
        if arg not in _DURATION_UNITS:
            raise FormatError(f"{directive}: unit must be s, ms or us")
        unit, rank = _DURATION_UNITS[arg]
        return Field(directive, "duration", unit=unit, rank=rank)
    if letter == "i" and low in _HEADERS:
        return Field(directive, _HEADERS[low])
    if letter == "o" and low == "content-type":
        return Field(directive, "content_type")
    if letter in "io" or letter in _OPAQUE:
        return Field(directive, "skip")
    raise FormatError(f"unknown directive {directive!r} (not an Apache mod_log_config directive)")


#: nginx variables wagon reads; every other variable is an opaque field
_NGINX = {
    "remote_addr": Field("$remote_addr", "host"),
    "realip_remote_addr": Field("$realip_remote_addr", "host"),
    "http_x_forwarded_for": Field("$http_x_forwarded_for", "forwarded"),
    "time_local": Field("$time_local", "time", apache_time("end:%d/%b/%Y:%H:%M:%S %z")),
    "time_iso8601": Field("$time_iso8601", "time", TimeFormat(ISO_TOKENS, "end")),
    "msec": Field("$msec", "time", TimeFormat(NGINX_MSEC, "end")),
    "request": Field("$request", "request"),
    "request_method": Field("$request_method", "method"),
    "request_uri": Field("$request_uri", "url"),
    "uri": Field("$uri", "url"),
    "document_uri": Field("$document_uri", "url"),
    "args": Field("$args", "query"),
    "query_string": Field("$query_string", "query"),
    "status": Field("$status", "status"),
    "body_bytes_sent": Field("$body_bytes_sent", "size", rank=0),
    "bytes_sent": Field("$bytes_sent", "size", rank=1),
    "request_length": Field("$request_length", "size_in"),
    "request_time": Field("$request_time", "duration", unit=1.0, rank=0, fraction=True),
    "upstream_response_time": Field("$upstream_response_time", "duration", unit=1.0, rank=3,
                                    fraction=True),
    "http_referer": Field("$http_referer", "referer"),
    "http_user_agent": Field("$http_user_agent", "agent"),
    "host": Field("$host", "vhost"),
    "server_name": Field("$server_name", "vhost"),
    "sent_http_content_type": Field("$sent_http_content_type", "content_type"),
}


def _tokens(spec: str) -> list[str | Field]:
    """The layout as literal text and Fields, from an Apache or an nginx format string."""
    out: list[str | Field] = []
    if _DIRECTIVE.search(spec) is None and _NGINX_VAR.search(spec):
        pos = 0
        for m in _NGINX_VAR.finditer(spec):
            out.append(spec[pos:m.start()])
            name = m.group(1) or m.group(2)
            out.append(_NGINX.get(name, Field(f"${name}", "skip")))
            pos = m.end()
        out.append(spec[pos:])
        return out
    pos = 0
    gaps = []
    for m in _DIRECTIVE.finditer(spec):
        gaps.append(spec[pos:m.start()])
        out.append(gaps[-1])
        pos = m.end()
        letter, arg = m.group(3), m.group(2)
        if letter == "%":
            out.append("%")
        elif letter == "t" and arg is None:      # %t is [%d/%b/%Y:%H:%M:%S %z]
            out += ["[", _apache_field("t", None), "]"]
        else:
            out.append(_apache_field(letter, arg))
    out.append(spec[pos:])
    bad = [g for g in gaps + [spec[pos:]] if "%" in g]
    if bad:
        raise FormatError(f"unknown directive in {bad[0]!r}")
    return out


def compile_format(spec: str, name: str = "custom") -> LogFormat:
    """Compile an Apache LogFormat or nginx log_format string; FormatError when it cannot be
    walked or lacks what sessions need (a client, a time with a date, a request).

    Example:

    >>> fmt = wagon.compile_format('$remote_addr - $remote_user [$time_local] "$request" '
    ...                            '$status $body_bytes_sent', name="nginx-common")
    >>> [f.role for f in fmt.fields]
    ['host', 'skip', 'time', 'request', 'status', 'size']
    """
    literals: list[bytes] = []
    fields: list[Field] = []
    text = ""
    for tok in _tokens(spec):
        if isinstance(tok, str):
            text += tok
            continue
        prev = fields[-1] if fields else None
        if (prev is not None and prev.role == tok.role == "time" and prev.time and tok.time
                and prev.time.group == tok.time.group and "[" not in text):
            # adjacent time pieces (%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t): one time field
            fields[-1] = replace(prev, directive=prev.directive + text + tok.directive,
                                 time=merged(prev.time, text, tok.time))
            text = ""
            continue
        if prev is not None and prev.role == "url" and tok.role == "query" and not text:
            continue                               # %U%q: one URL, its query cut unless kept
        if fields and not text:
            raise FormatError(f"{fields[-1].directive} and {tok.directive} have nothing between "
                              "them; the parser needs a separator")
        literals.append(text.encode("latin-1"))
        fields.append(tok)
        text = ""
    literals.append(text.encode("latin-1"))
    if not fields:
        raise FormatError(f"format {spec!r} has no % directives or $variables")
    roles = {f.role for f in fields}
    times = [f for f in fields if f.role == "time"]
    if not times:
        raise FormatError(f"format {spec!r} has no time field (%t); sessions need one")
    if not any(has_date(f.time.tokens) for f in times if f.time):
        raise FormatError(f"format {spec!r}: its time has no date (day or epoch)")
    if not roles & {"host", "forwarded"}:
        raise FormatError(f"format {spec!r} has no client field (%h, %a or "
                          "%{X-Forwarded-For}i)")
    if not roles & {"request", "url"}:
        raise FormatError(f"format {spec!r} has no request line (%r, or %U)")
    return LogFormat(name, spec, tuple(literals), tuple(fields))


_ROLE_PATTERNS = {"host": rb"(\S+)", "request": rb"(.*)", "status": rb"(\d{3})",
                  "size": rb"(\d+|-)", "agent": rb"(.*)", "time": rb"(.+?)"}


def line_regex(fmt: LogFormat) -> "re.Pattern[bytes]":
    """A backtracking regex for the same layout, one group per field: the slow path for the
    rare lines the vectorised walk cannot split (a quote inside a request, say)."""
    parts = [re.escape(fmt.literals[0])]
    for f, lit in zip(fmt.fields, fmt.literals[1:]):
        parts.append((rb" *" if f.pad else b"") + _ROLE_PATTERNS.get(f.role, rb"(.*?)"))
        parts.append(re.escape(lit))
    return re.compile(b"".join(parts), re.S)


COMMON = '%h %l %u %t "%r" %>s %b'
COMBINED = COMMON + ' "%{Referer}i" "%{User-Agent}i"'
NGINX = ('$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
         '"$http_referer" "$http_user_agent"')
NAMED_FORMATS: dict[str, str] = {
    "combined": COMBINED,
    "common": COMMON,
    "epa": '%h [%{%d:%H:%M:%S}t] "%r" %>s %b',
    "vhost_combined": '%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"',
    "combinedio": COMBINED + " %I %O",
    "nginx": NGINX,
    "nginx-main": NGINX + ' "$http_x_forwarded_for"',
    # wagon serve --access-log (replay.server.ACCESS_LOG_FORMAT), and nginx logging as it does:
    # end times to the millisecond and the request time, so starts are exact to 1 ms
    "wagon": ('$remote_addr - $remote_user [$msec] "$request" $status $body_bytes_sent '
              '"$http_referer" "$http_user_agent" $request_time $connection $connection_requests'),
    "vcombined": '%v:%p %h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    "vcommon": '%v:%p %h %l %u %t "%r" %>s %b',
    **PRESETS,
}
#: what ``--format auto`` tries on the first lines of a text log (richer layouts first on ties)
AUTO_CANDIDATES = ("wagon", *AUTO_ORDER, "vhost_combined", "vcombined", "vcommon", "combinedio",
                   "nginx-main", "combined", "common", "epa")


@functools.lru_cache(maxsize=None)
def named_format(name: str) -> LogFormat:
    """The compiled named layout ``name`` (its fields' ``FLAGS`` set)."""
    fmt = compile_format(NAMED_FORMATS[name], name)
    flags = FLAGS.get(name, {})
    return replace(fmt, fields=tuple(replace(f, **{flags[f.directive]: True})
                                     if f.directive in flags else f for f in fmt.fields))


def resolve_format(name_or_spec: str) -> LogFormat:
    """A named layout or an Apache/nginx format string (JSON layouts: ``wagon.logs.jsonlog``)."""
    if name_or_spec in NAMED_FORMATS:
        return named_format(name_or_spec)
    if "%" in name_or_spec or "$" in name_or_spec:
        return compile_format(name_or_spec)
    raise FormatError(f"unknown format {name_or_spec!r}: use auto, "
                      f"{', '.join(NAMED_FORMATS)}, a JSON layout, an Apache LogFormat string "
                      "or an nginx log_format string")
