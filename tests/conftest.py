"""Shared fixtures: paths to the real 1995 traces and the bundled sample."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT.parent / "shared" / "data" / "logs"
NASA = LOGS / "nasa-aug95-morning.log"
EPA = LOGS / "epa-http-aug95-half.log"
SAMPLE = ROOT / "data" / "sample-combined.log.gz"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: the real traces live in ../shared/data/logs/")
    return path


@pytest.fixture
def nasa() -> Path:
    return _need(NASA)


@pytest.fixture
def epa() -> Path:
    return _need(EPA)


@pytest.fixture
def sample() -> Path:
    return _need(SAMPLE)
