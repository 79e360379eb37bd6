"""How often a perfect model fails the fidelity bench's burstiness criterion, octave by octave.

``bench/fidelity_bench.py`` calls an octave of a synthetic traffic off when its wavelet energy
differs from the log's by more than the log's 95 % interval half-width (χ² with as many degrees
of freedom as coefficients: Abry & Veitch 1998) and by more than 1 log₂ unit (Swing's
criterion, as issue 35 states it). Here the "log" is itself a synthetic traffic: each ordered
pair of N seeds of one model, the first standing for the log, the second for the synthetic, is
judged by the same rule, so that every octave found off is the criterion's false alarm. At the
coarse octaves the coefficients are few and, in a day of a real site's profile, not
independent: the χ² interval is then too narrow for a difference of two runs, and a model is
off there by chance alone that often.

    python bench/fidelity_noise.py LOG [--seeds 8]

Prints, per octave, the share of ordered pairs of seeds found off.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fidelity_bench import energies, half_width, parse_bytes, span, wagon  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "m.json"
        fit = json.loads(wagon("fit", str(a.log), "-o", str(model), "--json"))
        runs = []
        for seed in range(1, a.seeds + 1):
            scenario, log = Path(tmp) / "s.jsonl", Path(tmp) / f"s{seed}.log"
            wagon("synth", str(model), "--duration", f"{span(fit):.0f}", "--profile", "model",
                  "--seed", str(seed), "-o", str(scenario), "--force")
            wagon("export", str(scenario), "--to", "combined", "-o", str(log))
            runs.append(energies(np.asarray(parse_bytes(log.read_bytes())[0].time, float)))
    pairs = [(x, y) for i, x in enumerate(runs) for k, y in enumerate(runs) if i != k]
    print(f"{a.log.name}: {a.seeds} seeds, {len(pairs)} ordered pairs; share of pairs whose "
          "octave is off (|Δ| > max(the first's 95 % half-width, 1 log2 unit)):")
    for j in sorted(runs[0]):
        off = [abs(y[j][0] - x[j][0]) > max(half_width(x[j][1]), 1.0)
               for x, y in pairs if j in x and j in y]
        print(f"  octave {j:2d} ({2 ** j:5d} s, {runs[0][j][1]:6,} coefficients): "
              f"{np.mean(off):.2f}")


if __name__ == "__main__":
    main()
