"""The command-line loop as tests run it: fit a log, synthesize from the model, export the
scenario as a log, each step asserted to succeed."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from wagon.cli import main


def wagon_ok(*args: str) -> Result:
    """``wagon ARGS``, which must exit 0."""
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r


def synth_export(folder: Path, sessions: int, seed: int, model: str = "m.json") -> Path:
    """``folder/model`` synthesized (``s.jsonl``) and exported as a CLF log, ``x.log``."""
    wagon_ok("synth", str(folder / model), "--sessions", str(sessions), "--seed", str(seed),
             "-o", str(folder / "s.jsonl"))
    wagon_ok("export", str(folder / "s.jsonl"), "--to", "clf", "-o", str(folder / "x.log"))
    return folder / "x.log"
