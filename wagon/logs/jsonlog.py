"""JSON-lines access logs (nginx ``escape=json``, Caddy, Traefik) read through a field mapping.

Each record is decoded with the standard library and its mapped values are written as one line of
an internal layout (fields joined by the unit separator, 0x1F); the vectorised parser then reads
those lines like any text log, so times, requests, sizes and durations are decoded by the same
code. A line that is not a JSON object keeps its line number and is counted as ``not JSON``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from .logformat import Field, LogFormat
from .timefmt import CLF_TOKENS, EPOCH_FLOAT, ISO_TOKENS, TimeFormat

__all__ = ["JsonLayout", "JSON_FORMATS", "json_layout", "bind_json", "detect_json", "to_text",
           "RECORD", "NOT_JSON", "NOT_ACCESS"]

SEP = "\x1f"


@dataclass(frozen=True)
class Mapping:
    """A role read from one of ``keys`` (dotted paths; the first present in the first record
    wins); ``time`` says how a time is written (``auto``: judged from the first value)."""

    role: str
    keys: tuple[str, ...]
    unit: float = 1.0
    group: str = "begin"


@dataclass(frozen=True)
class JsonLayout:
    """A JSON layout bound to the keys of one file: ``paths[i]`` feeds ``fmt.fields[i]``."""

    name: str
    paths: tuple[str, ...]
    fmt: LogFormat


_CADDY = (
    Mapping("host", ("request.client_ip", "request.remote_ip", "request.remote_addr")),
    Mapping("time", ("ts",), group="end"),
    Mapping("method", ("request.method",)),
    Mapping("url", ("request.uri",)),
    Mapping("status", ("status",)),
    Mapping("size", ("size",)),
    Mapping("duration", ("duration",)),
    Mapping("referer", ("request.headers.Referer",)),
    Mapping("agent", ("request.headers.User-Agent",)),
    Mapping("forwarded", ("request.headers.X-Forwarded-For",)),
    Mapping("vhost", ("request.host",)),
    Mapping("content_type", ("resp_headers.Content-Type",)),
)
_TRAEFIK = (
    Mapping("host", ("ClientHost",)),
    Mapping("time", ("StartUTC", "StartLocal")),
    Mapping("method", ("RequestMethod",)),
    Mapping("url", ("RequestPath",)),
    Mapping("status", ("DownstreamStatus", "OriginStatus")),
    Mapping("size", ("DownstreamContentSize", "OriginContentSize")),
    Mapping("duration", ("Duration",), unit=1e-9),
    Mapping("referer", ("request_Referer",)),
    Mapping("agent", ("request_User-Agent",)),
    Mapping("forwarded", ("request_X-Forwarded-For",)),
    Mapping("vhost", ("RequestHost",)),
    Mapping("content_type", ("downstream_Content-Type",)),
)
#: nginx ``log_format ... escape=json``: keys are the user's; these are the usual names
_NGINX = (
    Mapping("host", ("remote_addr", "client_ip", "ip", "client")),
    Mapping("time", ("time_iso8601", "time_local", "msec", "time", "timestamp", "@timestamp"),
            group="end"),
    Mapping("request", ("request",)),
    Mapping("method", ("request_method", "method")),
    Mapping("url", ("request_uri", "uri", "path")),
    Mapping("status", ("status",)),
    Mapping("size", ("body_bytes_sent", "bytes_sent", "size")),
    Mapping("duration", ("request_time", "upstream_response_time", "duration")),
    Mapping("referer", ("http_referer", "http_referrer", "referer", "referrer")),
    Mapping("agent", ("http_user_agent", "user_agent", "agent")),
    Mapping("forwarded", ("http_x_forwarded_for", "x_forwarded_for")),
    Mapping("vhost", ("host", "server_name", "http_host")),
    Mapping("content_type", ("sent_http_content_type", "content_type")),
)
JSON_FORMATS = {"caddy": _CADDY, "traefik": _TRAEFIK, "nginx-json": _NGINX}


def _get(record: dict, path: str):
    """The value at a dotted path (header lists give their first value), or None."""
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, list):
        value = value[0] if value else None
    return value


def _time_format(value, group: str) -> TimeFormat:
    """How a time value is written, judged from one value."""
    text = str(value)
    if isinstance(value, (int, float)) or text.replace(".", "", 1).isdigit():
        return TimeFormat(EPOCH_FLOAT, group)
    if "/" in text:
        return TimeFormat(CLF_TOKENS, group, "clf")
    return TimeFormat(ISO_TOKENS, group)


def _make(name: str, paths: list[str], fields: list[Field]) -> JsonLayout:
    literals = (b"",) + (SEP.encode(),) * (len(fields) - 1) + (b"",)
    return JsonLayout(name, tuple(paths), LogFormat(name, name, literals, tuple(fields)))


def json_layout(name: str, record: dict) -> JsonLayout | None:
    """Layout ``name`` bound to the keys present in ``record`` (None when it lacks a client,
    a time or a request)."""
    paths, fields = [], []
    for m in JSON_FORMATS[name]:
        key = next((k for k in m.keys if _get(record, k) is not None), None)
        if key is None:
            continue
        time = _time_format(_get(record, key), m.group) if m.role == "time" else None
        rank = 3 if key == "upstream_response_time" else 0
        fields.append(Field(key, m.role, time=time, unit=m.unit, rank=rank))
        paths.append(key)
    roles = {f.role for f in fields}
    if not ({"host", "time"} <= roles and roles & {"request", "url"}):
        return None
    return _make(name, paths, fields)


def bind_json(name: str, lines: list[bytes]) -> JsonLayout:
    """Layout ``name`` bound to the keys of the first record of ``lines`` that has them, or to
    its first keys (whose lines then do not match)."""
    for rec in _records(lines[:50]):
        layout = json_layout(name, rec) if rec is not None else None
        if layout is not None:
            return layout
    maps = JSON_FORMATS[name]
    return _make(name, [m.keys[0] for m in maps],
                 [Field(m.keys[0], m.role, unit=m.unit, time=TimeFormat(EPOCH_FLOAT, m.group)
                        if m.role == "time" else None) for m in maps])


def _records(lines: list[bytes]) -> list[dict | None]:
    """Each line's JSON object, None for a line that is not one (one decoder call for all the
    lines when they all are objects)."""
    try:
        whole = json.loads(b"[" + b",".join(lines) + b"]")
        if len(whole) == len(lines) and all(isinstance(r, dict) for r in whole):
            return whole
    except (ValueError, UnicodeDecodeError):
        pass
    out: list[dict | None] = []
    for line in lines:
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            rec = None
        out.append(rec if isinstance(rec, dict) else None)
    return out


def detect_json(lines: list[bytes]) -> JsonLayout | None:
    """The JSON layout whose keys the first access record holds (Caddy, Traefik, then
    nginx's): records before it that no layout maps (Caddy's start-up messages on the same
    stream) are passed over."""
    for record in _records(lines[:50]):
        for name in JSON_FORMATS if record is not None else ():
            layout = json_layout(name, record)
            if layout is not None:
                return layout
    return None


def _text(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return _text(value[0]) if value else "-"
    if isinstance(value, float):      # the shortest digits that give the value back (a time's
        text = repr(value)            # resolution is read from them), without an exponent
        return text if "e" not in text else f"{value:.9f}"
    return str(value)


def _clean(text: str) -> str:
    return text.replace(SEP, " ").replace("\n", " ").replace("\r", " ")


def _getters(paths: tuple[str, ...]) -> list:
    """A value getter per path: a plain dict look-up for flat keys (the common case)."""
    return [(lambda r, k=key: r.get(k)) if "." not in key else (lambda r, k=key: _get(r, k))
            for key in paths]


#: what ``to_text`` says of a line: a record of the layout, not a JSON object, a JSON object
#: without the layout's client, time and request (a server's own messages)
RECORD, NOT_JSON, NOT_ACCESS = 0, 1, 2
_NEEDED = ("request", "url")


def to_text(buf: bytes, layout: JsonLayout) -> tuple[bytes, np.ndarray]:
    """The lines of ``buf`` (whole lines) in the layout's internal text form, and what each is
    (``RECORD``, ``NOT_JSON``, ``NOT_ACCESS``: the internal line of the last two is left
    empty)."""
    lines = buf.split(b"\n")[:-1]
    records = _records(lines)
    kind = np.zeros(len(lines), np.uint8)
    out = []
    getters = _getters(layout.paths)
    needed = [k for k, f in enumerate(layout.fmt.fields) if f.role in _NEEDED]
    seps = len(getters) - 1
    for i, rec in enumerate(records):
        values = [g(rec) for g in getters] if rec is not None else None
        if values is None or (values[needed[0]] is None
                              and all(values[k] is None for k in needed)):
            kind[i] = NOT_JSON if rec is None else NOT_ACCESS
            if rec is None and not lines[i].strip():
                kind[i] = RECORD                   # an empty line: counted as such
            out.append("")
            continue
        line = SEP.join([v if v.__class__ is str else _text(v) for v in values])
        if line.count(SEP) != seps or "\n" in line or "\r" in line:
            line = SEP.join(_clean(_text(v)) for v in values)
        out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8", "surrogateescape"), kind
