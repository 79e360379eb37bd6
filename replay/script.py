"""Scripted behaviour where logs are silent (``wagon replay --script FILE.py``).

An access log has no request bodies, no logins and no checks: a user's script adds them to
the pages of the scenario's site, named as ``"METHOD URL-template"`` (``"POST /cart"``,
``"GET /item/{id}"``). FILE.py defines ``script = Script(...)``:

- ``start``: pages each session plays before its first click (a login), think time 0;
- ``on(page, after=, url=, form=, json=, body=, headers=, extract=, check=)``: the pages it
  is sent from (``after=["GET /cart"]``: a form is submitted from the page that shows it; when
  the session is on none of them — its last click's page, or the URL its redirects ended on —
  the first is fetched before, as a user opens the form first: a model's Markov chain may
  reach a form's POST from elsewhere), the values of the
  click's URL placeholders that belong to the session rather than to the model (``url={"id":
  "{order}"}``: the order this session made, not a drawn one), the request's body (form
  fields, sent ``application/x-www-form-urlencoded``, or JSON, or raw bytes) and header
  fields, values to take from its answer into the session's values, and checks on the answer
  (a page the scenario's site does not have is skipped, and said once);
- ``data(name, csv)``: a CSV file of the user's; session i uses row ``i mod rows``.

A string anywhere in a form, JSON or header value may name values as ``{name}``: the click's
URL placeholders (``{id}``), values extracted earlier in the session (``{csrf}``), a data row's
fields (``{users.email}``), and ``{status}``: the status the scenario drew for the request
(the model's, per move out of a form: ``site.move_statuses``; ``200`` for content; empty when
the scenario drew no statuses, as one written by hand). A value may
also be a function of those values (``lambda v: ...``, a dict of them by name), for what a
template cannot say: a wrong password where the scenario drew the failed login the log shows.
Extraction and checks see the answer after its redirects; ``when(status, check)`` checks only
the requests the scenario drew with that status.

A failure is the request's own outcome, counted as errors are (``check_failed``,
``extract_failed``, ``script_error``: a value the session does not have, a hook that raised);
the emulated browser, network and timing stay as they are, and scripted requests are recorded
as every request is. The engine knows only ``SessionScript``'s four calls.
"""
from __future__ import annotations

import csv
import importlib.util
import json as jsonlib
import os
import re
from dataclasses import dataclass, field, replace
from typing import Callable
from urllib.parse import unquote, urlencode, urlsplit

from ..formats.site import PLACEHOLDER, SiteSpec, fill_template, template_pattern

__all__ = ["Script", "ScriptError", "BoundScript", "SessionScript", "Answer", "form_field",
           "regex", "maybe", "header", "cookie", "json_path", "status", "contains", "json_field",
           "when", "load_script", "CHECK_FAILED", "EXTRACT_FAILED", "SCRIPT_ERROR", "MAX_KEPT"]

CHECK_FAILED, EXTRACT_FAILED, SCRIPT_ERROR = "check_failed", "extract_failed", "script_error"
MAX_KEPT = 1 << 20               # bytes of an answer's body a script sees
_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")


class ScriptError(ValueError):
    """A script that cannot be played (one line, naming the file)."""


class Failure(Exception):
    """What a request of a session became (its ``kind``: an error kind) and why."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind


@dataclass
class Answer:
    """What a script sees of an answer: its status, header fields (names in lower case) and
    the first ``MAX_KEPT`` bytes of its body."""

    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    drawn: int | None = None      # the status the scenario drew for the request (200: content;
                                  # None: it drew none)

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k == name), None)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self):
        return jsonlib.loads(self.body)

    def add_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.decode("latin-1").lower(), value.decode("latin-1")))

    def add_body(self, data: bytes) -> None:
        room = MAX_KEPT - len(self.body)
        if room > 0:
            self.body += data[:room]


# ---- extractors: Answer → a value, or None when it is not there --------------------------------
Extractor = Callable[[Answer], "str | None"]
Check = Callable[[Answer], "str | None"]     # None: it holds; else what does not


def regex(pattern: str, group: int = 1) -> Extractor:
    """The ``group`` of the first match of ``pattern`` in the body."""
    rx = re.compile(pattern)

    def get(a: Answer) -> str | None:
        m = rx.search(a.text)
        return None if m is None else m.group(group)
    return get


def form_field(name: str) -> Extractor:
    """The ``value`` of the first ``<input>`` whose ``name`` is ``name`` (either order of the
    two attributes, either quote)."""
    tag = re.compile(r"<input\b[^>]*>", re.I)
    named = re.compile(r"""\bname\s*=\s*["']%s["']""" % re.escape(name), re.I)
    value = re.compile(r"""\bvalue\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)

    def get(a: Answer) -> str | None:
        for t in tag.findall(a.text):
            if named.search(t):
                m = value.search(t)
                return None if m is None else (m.group(1) if m.group(1) is not None
                                               else m.group(2))
        return None
    return get


def maybe(get: Extractor) -> Extractor:
    """``get``, but an answer without the value is no failure (the session's value stays as it
    was): a form that a page shows only sometimes."""
    def optional(a: Answer) -> str | None:
        return get(a)
    optional.optional = True
    return optional


def header(name: str) -> Extractor:
    """The answer's header field ``name``."""
    return lambda a: a.header(name)


def cookie(name: str) -> Extractor:
    """The value the answer sets for cookie ``name`` (a ``Set-Cookie`` field)."""
    def get(a: Answer) -> str | None:
        for k, v in a.headers:
            if k == "set-cookie":
                n, _, rest = v.partition("=")
                if n.strip() == name:
                    return rest.split(";", 1)[0]
        return None
    return get


def _walk(doc, path: str):
    for part in path.split(".") if path else ():
        if isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            raise KeyError(part)
    return doc


def json_path(path: str) -> Extractor:
    """The JSON body's value at ``path`` (keys and list indices joined by dots: ``items.0.id``)."""
    def get(a: Answer) -> str | None:
        try:
            v = _walk(a.json(), path)
        except (ValueError, KeyError):
            return None
        return v if isinstance(v, str) else jsonlib.dumps(v)
    return get


# ---- checks: Answer → None when it holds, else what failed ------------------------------------
def status(*codes: int) -> Check:
    """The answer's status is one of ``codes``."""
    return lambda a: None if a.status in codes else f"status {a.status}, not {codes}"


def contains(text: str) -> Check:
    """The body holds ``text``."""
    return lambda a: None if text in a.text else f"no {text!r} in the body"


def when(code: int, check: Check) -> Check:
    """``check``, on the requests the scenario drew answered ``code`` only (200: content;
    a scenario that drew no statuses, as one written by hand, runs it on none)."""
    def drawn(a: Answer) -> str | None:
        return check(a) if a.drawn == code else None
    return drawn


def json_field(path: str, equals: object = None) -> Check:
    """The JSON body has ``path`` (equal to ``equals`` when given)."""
    def check(a: Answer) -> str | None:
        try:
            v = _walk(a.json(), path)
        except (ValueError, KeyError):
            return f"no JSON field {path}"
        return None if equals is None or v == equals else f"{path} is {v!r}, not {equals!r}"
    return check


@dataclass
class Hook:
    """What a script does with the requests of one page."""

    after: list[str] = field(default_factory=list)
    url: dict[str, str] = field(default_factory=dict)
    form: dict | None = None
    json: object = None
    body: str | bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    extract: dict[str, Extractor] = field(default_factory=dict)
    check: list[Check] = field(default_factory=list)
    names: list[str] = field(default_factory=list)    # the script's placeholder names, in order
    sources: list[tuple[int | None, str]] = field(default_factory=list)   # ``after``: (its page,
                                            # None when the site has none; its URL template)

    @property
    def reads(self) -> bool:
        """Does it need the answer?"""
        return bool(self.extract or self.check)


class Script:
    """A user's script (module docstring): ``script = Script(start=[...])`` in FILE.py."""

    def __init__(self, start: list[str] | tuple[str, ...] = ()) -> None:
        self.start = list(start)
        self.hooks: dict[str, Hook] = {}
        self.tables: dict[str, str] = {}

    def on(self, page: str, *, after: list[str] | tuple[str, ...] = (),
           url: dict[str, str] | None = None, form: dict | None = None,
           json: object = None, body: str | bytes | None = None,
           headers: dict[str, str] | None = None, extract: dict[str, Extractor] | None = None,
           check: Check | list[Check] | None = None) -> "Script":
        """Attach the pages it is sent from, URL values, a body, headers, extractions and
        checks to ``page`` (``"METHOD template"``)."""
        checks = [] if check is None else list(check) if isinstance(check, list) else [check]
        unknown = set(url or {}) - set(PLACEHOLDER.findall(page))
        if unknown:
            raise ScriptError(f"on({page!r}): url names {sorted(unknown)[0]!r}, not a "
                              "placeholder of the page")
        self.hooks[page] = Hook(list(after), dict(url or {}), form, json, body,
                                dict(headers or {}),
                                dict(extract or {}), checks)
        return self

    def data(self, name: str, path: str) -> "Script":
        """A CSV file (header line first) whose rows the sessions take in turn as ``name``."""
        self.tables[name] = path
        return self


@dataclass
class BoundScript:
    """A script bound to a scenario's site: hooks by page index, start pages, data rows."""

    path: str
    hooks: dict[int, Hook]
    start: list[int]
    tables: dict[str, list[dict[str, str]]]
    site: SiteSpec
    unused: list[str]           # the script's pages this site does not have (skipped)

    def session(self, session: int) -> "SessionScript":
        values = {f"{name}.{k}": v for name, rows in self.tables.items()
                  for k, v in rows[session % len(rows)].items()}
        return SessionScript(self, values)


class SessionScript:
    """A session's side of the script: its values, and the three calls the browser makes."""

    def __init__(self, bound: BoundScript, values: dict[str, str]) -> None:
        self.bound, self.values = bound, values

    @property
    def start(self) -> list[int]:
        return self.bound.start

    def before(self, page: int, last: tuple[int, str] | None) -> tuple[int, str] | None:
        """The page (and its URL, placeholders filled from the session's values) to fetch
        before ``page`` when the session is on none of those it is sent from (``last``: its
        previous click's page and the URL it ended on, after redirects: a POST /cart's 303
        lands on /cart); Failure (``script_error``) when a value is missing."""
        hook = self.bound.hooks.get(page)
        fetch = [(p, url) for p, url in hook.sources if p is not None] if hook else []
        if not fetch or last is not None and any(
                p == last[0] or _shows(url, last[1]) for p, url in hook.sources):
            return None
        first, url = fetch[0]
        return first, self._fill(url, self.values)

    def request(self, page: int, url: str, drawn: int | None = None
                ) -> tuple[str, bytes | None, list[tuple[str, str]], bool]:
        """The URL, body, header fields and whether the answer is needed, of ``page``'s
        request at ``url`` (``drawn``: the status the scenario drew for it, 200 for content,
        None when it drew none); Failure (``script_error``) when a value is missing or the
        hook raised."""
        hook = self.bound.hooks.get(page)
        if hook is None:
            return url, None, [], False
        pattern = self.bound.site.templates[page]
        m = pattern.fullmatch(url.split("#", 1)[0]) if pattern is not None else None
        own = {k: unquote(v) for k, v in m.groupdict().items()} if m else {}
        own_values = self.values | {"status": "" if drawn is None else str(drawn)}
        values = own_values | own | dict(zip(hook.names, own.values()))   # the script's names
        if hook.url and m:                  # the session's own values, in the URL and after
            site_name = dict(zip(hook.names, own))
            own = own | {site_name[k]: self._fill(v, values) for k, v in hook.url.items()}
            values = own_values | own | dict(zip(hook.names, own.values()))
            url = fill_template(self.bound.site.page_urls[page], own)
        headers = [(k, self._fill(v, values)) for k, v in hook.headers.items()]
        body = None
        if hook.form is not None:
            body = urlencode({k: self._fill(v, values) for k, v in hook.form.items()}).encode()
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        elif hook.json is not None:
            body = jsonlib.dumps(self._deep(hook.json, values)).encode()
            headers.append(("Content-Type", "application/json"))
        elif hook.body is not None:
            body = hook.body if isinstance(hook.body, bytes) else \
                self._fill(hook.body, values).encode()
        return url, body, headers, hook.reads

    def answered(self, page: int, answer: Answer) -> None:
        """Take the page's values from ``answer`` and check it; Failure when a check fails
        or a value is not there."""
        hook = self.bound.hooks.get(page)
        if hook is None:
            return
        try:
            for name, get in hook.extract.items():
                got = get(answer)
                if got is not None:
                    self.values[name] = got
                elif not getattr(get, "optional", False):
                    raise Failure(EXTRACT_FAILED, f"{name}: not in the answer")
            for check in hook.check:
                why = check(answer)
                if why is not None:
                    raise Failure(CHECK_FAILED, why)
        except Failure:
            raise
        except Exception as e:         # a user's hook: whatever it raises is its failure
            raise Failure(SCRIPT_ERROR, f"{type(e).__name__}: {e}") from None

    def _fill(self, text: object, values: dict[str, str]) -> str:
        if callable(text):               # a user's function of the values: what it raises
            try:                         # is its failure (``script_error``)
                return str(text(dict(values)))
            except Exception as e:
                raise Failure(SCRIPT_ERROR, f"{type(e).__name__}: {e}") from None
        if not isinstance(text, str):
            return str(text)

        def one(m: re.Match) -> str:
            try:
                return str(values[m.group(1)])
            except KeyError:
                raise Failure(SCRIPT_ERROR, f"no value {m.group(1)!r} in the session") from None
        return _NAME.sub(one, text)

    def _deep(self, doc: object, values: dict[str, str]) -> object:
        if isinstance(doc, dict):
            return {k: self._deep(v, values) for k, v in doc.items()}
        if isinstance(doc, list):
            return [self._deep(v, values) for v in doc]
        return self._fill(doc, values) if isinstance(doc, str) or callable(doc) else doc


def _shows(template: str, url: str) -> bool:
    """Is ``url`` (a server path, its query kept) one of ``template``'s URLs? (A form's page
    that a redirect lands on need not be a page of the site: ``/login?next=/cart``.)"""
    there = urlsplit(url)
    url = there.path + ("?" + there.query if there.query else "")
    pattern = template_pattern(template)
    return pattern.fullmatch(url) is not None if pattern is not None else url == template


def _shape(page: str) -> str:
    """``"METHOD URL"`` with its placeholders unnamed: a script's ``/item/{id}`` is the site's
    ``/item/{item}`` (the script's names stand for the site's, in order)."""
    return PLACEHOLDER.sub("{}", page)


def _pages(site: SiteSpec) -> dict[str, int]:
    return {_shape(f"{m} {u}"): i for i, (m, u) in enumerate(zip(site.page_methods,
                                                                  site.page_urls))}


def _table(path: str, name: str, script: str) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ScriptError(f"{script}: data {name!r} ({path}): {getattr(e, 'strerror', None) or e}"
                          ) from None
    if not rows:
        raise ScriptError(f"{script}: data {name!r} ({path}) has no row")
    return rows


def load_script(path: str, site: SiteSpec) -> BoundScript:
    """Run FILE.py and bind its ``script`` to ``site``; ScriptError (one line) for a file that
    cannot run, has no ``script``, or names a page the site does not have."""
    spec = importlib.util.spec_from_file_location("wagon_user_script", path)
    if spec is None or not os.path.isfile(path):
        raise ScriptError(f"{path}: no such script (a Python file)")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:             # the user's module: any error is one line
        raise ScriptError(f"{path}: the script fails to load: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}") from None
    script = getattr(module, "script", None)
    if not isinstance(script, Script):
        raise ScriptError(f"{path}: defines no 'script = Script(...)'")
    pages = _pages(site)
    missing = [p for p in script.start if _shape(p) not in pages]
    if missing:
        raise ScriptError(f"{path}: {missing[0]!r} is not a page of the scenario's site "
                          f"(pages are 'METHOD URL', e.g. {next(iter(pages))!r})")
    if any(site.templates[pages[_shape(p)]] is not None for p in script.start):
        raise ScriptError(f"{path}: a start page must have one URL (no placeholder)")
    here = os.path.dirname(os.path.abspath(path))
    tables = {n: _table(os.path.join(here, p), n, path) for n, p in script.tables.items()}
    hooks = {pages[_shape(p)]: replace(h, names=PLACEHOLDER.findall(p), sources=[
        (pages.get(_shape(a)), a.split(" ", 1)[1]) for a in h.after])
             for p, h in script.hooks.items() if _shape(p) in pages}
    return BoundScript(path, hooks, [pages[_shape(p)] for p in script.start], tables, site,
                       [p for p in script.hooks if _shape(p) not in pages])
