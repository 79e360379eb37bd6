"""``wagon fit`` as stages (wagon.modeling.stages): the model does not depend on how the inputs
are cut into pieces or the clients into partitions, on the real NASA trace with a stray line
(a time outlier) and an overlapping second input (repeated lines)."""
from __future__ import annotations

import gzip

import numpy as np
import pytest

from wagon.logs.parse import ParseOptions, parse_piece
from wagon.logs.pieces import plan
from wagon.modeling import FitOptions, fit_logs
from wagon.modeling.stages import LocalRunner

STRAY = b'stray.example.com - - [01/Aug/2100:10:00:00 -0400] "GET /ksc.html HTTP/1.0" 200 7280\n'


@pytest.fixture(scope="module")
def inputs(nasa, tmp_path_factory) -> list[str]:
    lines = gzip.decompress(nasa.read_bytes()).splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("scale")
    first, second = folder / "a.log", folder / "b.log"
    first.write_bytes(b"".join(lines[:12_000] + [STRAY] + lines[12_000:15_000]))
    second.write_bytes(b"".join(lines[9_000:]))               # 6,000 lines repeated
    return [str(first), str(second)]


def _model(result) -> dict:
    return {k: v for k, v in result.model.data.items() if k != "created"}


def test_pieces_own_every_line_once(inputs):
    for size in (7_919, 333_333, 1 << 30):
        pieces = plan(inputs, size)
        assert len(pieces) >= (2 if size > 1 << 20 else 3)
        results = [parse_piece(p, ParseOptions(fmt="common"), 3) for p in pieces]
        assert sum(r.stats.lines for r in results) == 15_001 + 11_000
        assert sum(len(c.requests) for r in results for c in r.chunks) == 26_001


def test_model_identical_for_one_piece_one_partition_and_many(inputs):
    one = fit_logs(inputs, FitOptions(), runner=LocalRunner(partitions=1))
    many = fit_logs(inputs, FitOptions(), runner=LocalRunner(partitions=7, piece_bytes=40_000))
    assert _model(one) == _model(many)
    assert one.stats.as_dict() == many.stats.as_dict()
    assert one.stats.time_outliers == 1 and one.stats.duplicates == 6_000
    assert one.sessions.counts == many.sessions.counts
    assert np.array_equal(one.sessions.session_start, many.sessions.session_start)
