"""The README's first command: ``wagon demo`` runs the whole pipeline (shortened here)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from replay.record import read_results

ROOT = Path(__file__).resolve().parent.parent


def test_demo_runs_the_whole_pipeline(tmp_path):
    out = tmp_path / "demo"
    r = subprocess.run([sys.executable, "-m", "wagon", "demo", "--outdir", str(out), "--duration",
                        "30", "--speedup", "10"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "1/4 fit" in r.stdout and "4/4 replay" in r.stdout and "demo done" in r.stdout
    assert "errors none" in r.stdout, r.stdout
    for name in ("model.json", "scenario.jsonl", "results.csv", "results.pages.csv",
                 "report.html", "plots/replay.png", "plots/think.png"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "model.json").read_text())["format"] == "wagon-model"
    rows = read_results(str(out / "results.csv"))
    assert rows and {r["class"] for r in rows} >= {"0", "1"}        # several client classes
