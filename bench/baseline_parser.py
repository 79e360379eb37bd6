"""The straightforward parser wagon's is measured against: one regex per line, strptime, int().

Deliberately plain: this is what a careful script would do, and what the benchmark's ratio and the
tests' field-by-field comparison are taken against."""
from __future__ import annotations

import gzip
import re
from datetime import datetime

CLF = re.compile(rb'^(\S+) (\S+) (\S+) \[([^\]]+)\] "(.*)" (\d{3}) (\d+|-)$')


def parse_line(line: bytes) -> tuple[str, float, str, str, int, int] | None:
    """(host, UTC seconds, method, url without query, status, size) or None."""
    m = CLF.match(line.rstrip(b"\r\n"))
    if m is None:
        return None
    host, _, _, stamp, request, status, size = m.groups()
    try:
        when = datetime.strptime(stamp.decode("ascii"), "%d/%b/%Y:%H:%M:%S %z").timestamp()
    except ValueError:
        return None
    parts = request.split(b" ")
    if len(parts) < 2 or not parts[0]:
        return None
    method = parts[0]
    url = b" ".join(parts[1:-1]) if len(parts) > 2 and parts[-1].startswith(b"HTTP/") else b" ".join(parts[1:])
    url = url.split(b"?", 1)[0]
    if not url:
        return None
    return (host.decode("utf-8", "backslashreplace"), when, method.decode("utf-8", "backslashreplace"),
            url.decode("utf-8", "backslashreplace"), int(status), 0 if size == b"-" else int(size))


def parse_file(path: str) -> tuple[list[tuple], int]:
    """All parsed records of a CLF file (plain or .gz) and the count of lines it rejected."""
    records, bad = [], 0
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        for line in f:
            rec = parse_line(line)
            if rec is None:
                bad += 1
            else:
                records.append(rec)
    return records, bad
