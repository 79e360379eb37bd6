"""The command-line loop as tests run it: fit a log, synthesize from the model, export the
scenario as a log, each step asserted to succeed."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from wagon.cli import main


def scenario_header(version: int, site: dict) -> dict:
    """A hand-written scenario's header: ``site``, one LAN class of one HTTP/1.1 connection."""
    return {"format": "wagon-scenario", "version": version, "seed": 0, "model": {},
            "options": {}, "site": site,
            "classes": [{"name": "lan/http11", "weight": 1.0,
                         "network": {"name": "lan", "rtt_ms": 0, "down_kbps": 1e6,
                                     "up_kbps": 1e6},
                         "protocol": {"name": "http11", "connections": 1,
                                      "persistent": True}}]}


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
