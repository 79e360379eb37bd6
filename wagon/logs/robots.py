"""Robots: clients that fetch /robots.txt or whose user agent matches a robot pattern.

The built-in list below is kept by this project: crawlers, feed readers, HTTP libraries and
command-line tools, headless browsers, monitors. Patterns are case-insensitive regular
expressions bounded by word edges, so a phone brand ("CUBOT") or a filter ("Securly") does not
match ``bot`` or ``curl``. ``--robots FILE`` replaces the list with a file of the same form
(``category: pattern`` or a bare pattern per line, ``#`` comments); ``--robots PATTERN`` with one
pattern.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["ROBOT_PATTERNS", "RobotRules", "robot_rules", "robot_clients"]

ROBOT_PATTERNS: tuple[tuple[str, str], ...] = (
    # specific kinds first, then crawlers: the first matching pattern names a robot's kind
    ("feed reader", r"\b(?:feedly|feedbin|newsblur|inoreader|feedfetcher|tiny tiny rss"
                    r"|freshrss|miniflux|liferea|rss2email|netnewswire|feedburner|bloglines"
                    r"|newsgator|rssowl|akregator|feedreader|feed ?parser|theoldreader"
                    r"|flipboard|feedspot|superfeedr)\b|\brss\b"),
    ("http library", r"\b(?:curl|wget|libwww-perl|lwp-\w+|python-requests|python-urllib"
                     r"|python-httpx|aiohttp|httpx|go-http-client|java/\d|okhttp"
                     r"|apache-httpclient|axios|node-fetch|undici|faraday"
                     r"|guzzlehttp|php/\d|winhttp|httpie|scrapy|libcurl|powershell"
                     r"|postmanruntime|insomnia|dart/\d|reqwest|hyper/\d)\b"),
    ("headless browser", r"\b(?:headlesschrome|phantomjs|slimerjs|puppeteer|playwright"
                         r"|selenium|webdriver|lighthouse|chrome-lighthouse"
                         r"|pagespeed|htmlunit|jsdom|prerender)\b"),
    ("monitor", r"\b(?:uptimerobot|pingdom|statuscake|site24x7|check_http|nagios|zabbix"
                r"|datadog|newrelicpinger|monitis|uptime|freshping|betteruptime|healthcheck"
                r"|kube-probe|elb-healthchecker|googlestackdrivermonitoring)\b"),
    # crawlers announce themselves: a contact URL, a *bot/ product token, or the words
    ("crawler", r"\+https?://|\(compatible;\s*[\w .!-]*(?:bot|crawler|spider)\b"),
    ("crawler", r"\b[\w-]*(?:bot|crawler|spider)\s*/\s*v?\d"),
    ("crawler", r"\b(?:bot|robot|crawler|spider|scraper|slurp|archiver|indexer)\b"),
    ("crawler", r"\b(?:googlebot|bingbot|baiduspider|yandex\w*|duckduckbot|applebot|petalbot"
                r"|ahrefsbot|semrushbot|mj12bot|dotbot|bytespider|gptbot|claudebot|ccbot"
                r"|facebookexternalhit|twitterbot|linkedinbot|ia_archiver|sogou|exabot"
                r"|seznambot|qwantify|mediapartners-google|adsbot-google|msnbot)\b"),
)


@dataclass(frozen=True)
class RobotRules:
    """Compiled robot patterns with their category (the counts are given by category)."""

    rules: tuple[tuple[str, "re.Pattern[str]"], ...]
    source: str

    def names(self) -> list[str]:
        """The categories in list order (a client of several counts under the first)."""
        return list(dict.fromkeys(name for name, _ in self.rules))

    def category(self, agent: str) -> str | None:
        """The category of the first pattern ``agent`` matches, or None."""
        for name, rx in self.rules:
            if rx.search(agent):
                return name
        return None


def _parse_rules(lines: list[str], source: str) -> RobotRules:
    rules = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, pattern = line.partition(": ")
        if not sep:
            name, pattern = "custom", line
        try:
            rules.append((name.strip(), re.compile(pattern, re.I)))
        except re.error as e:
            raise ValueError(f"{source}:{n}: bad robot pattern {pattern!r}: {e}") from None
    return RobotRules(tuple(rules), source)


#: how a file of patterns is named: a --robots value so named is a file, never a pattern
_LIST_SUFFIXES = (".txt", ".list", ".conf", ".lst")


def robot_rules(spec: str | None = None) -> RobotRules:
    """The built-in list (None), a file of patterns, or one pattern; ValueError when bad."""
    if spec is None:
        return _parse_rules([f"{c}: {p}" for c, p in ROBOT_PATTERNS], "built-in")
    if os.path.isfile(spec):
        try:
            with open(spec, encoding="utf-8") as f:
                return _parse_rules(f.read().splitlines(), spec)
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{spec}: cannot read robot patterns: {e}") from None
    if not spec:
        raise ValueError("--robots '': an empty pattern matches every user agent (to keep "
                         "robots: --keep-robots)")
    if os.path.isdir(os.path.dirname(spec) or ".") and (os.sep in spec
                                                         or spec.endswith(_LIST_SUFFIXES)):
        raise ValueError(f"--robots {spec}: no such file of robot patterns (a value that "
                         "names a path is read as a file; a pattern that looks like one goes "
                         "in a file)")
    try:
        return RobotRules((("custom", re.compile(spec, re.I)),), "pattern")
    except re.error as e:
        raise ValueError(f"--robots {spec!r}: not a file nor a valid pattern: {e}") from None


def robot_clients(client: np.ndarray, url: np.ndarray, urls: list[str], agent: np.ndarray,
                  agents: list[str], rules: RobotRules) -> tuple[np.ndarray, dict[str, int]]:
    """Client codes that are robots, and how many clients each rule caught (a client caught by
    several counts under the first: robots.txt, then the categories in list order)."""
    found: dict[str, np.ndarray] = {}
    if "/robots.txt" in urls:
        found["robots.txt"] = np.unique(client[url == urls.index("/robots.txt")])
    if agents:
        cats = [rules.category(a) for a in agents]
        names = [c for c in rules.names() if c in set(cats)]
        has = agent >= 0
        for name in names:
            flag = np.fromiter((c == name for c in cats), bool, len(cats))
            found[name] = np.unique(client[has][flag[agent[has]]])
    counts, seen = {}, np.zeros(0, client.dtype)
    for name, codes in found.items():
        new = np.setdiff1d(codes, seen)
        if len(new):
            counts[name] = int(len(new))
        seen = np.union1d(seen, new)
    return seen, counts
