"""The log → model → synthetic traffic → compare loop (issue 35's acceptance test), per log and
per seed, through the command line with its defaults, as a researcher runs it:

    wagon fit LOG -o model.json
    wagon synth model.json --duration <the span of its session starts> --profile model --seed S
    wagon export scenario.jsonl --to clf --start <the log's first second>
    wagon compare LOG synthetic.log --json

Printed per log and seed: the synthetic request count against the log's (the requests the model
was fitted on, robots left out), requests per click, the compare rows that differ or are
undecided, and Swing's burstiness criterion: the wavelet energy of requests per second
(log₂ of the mean squared Daubechies-3 detail coefficient, computed here with PyWavelets) at
every octave from 2 s to 2¹² s, synthetic minus log, with the log's 95 % interval half-width
(χ² with n_j degrees of freedom: Abry & Veitch 1998); an octave passes when the difference is
within that interval or within 1 log₂ unit.

    python bench/fidelity_bench.py [--seeds 1,2,3] [--log PATH ...] [--plot PNG]

``--plot`` draws each log's energy by octave with its 95 % interval beside each seed's
synthetic energy (docs/img/fidelity-energy.png).

The duration is the span of the log's session starts (the model's rate profile), not of its
requests: sessions still running at the end are synthesized to their end, as the log has them;
over the requests' span a short log gains the arrivals of its tail (the bundled sample: 540 s of
5,094, 12 % more sessions).

The bundled logs (tests/data: NASA, EPA; data/: the sample) are always run; other public logs are
given with --log (e.g. netnea's Apache example log: Apache-Labor/labor,
labor-07/labor-07-example-access.log, commit 1470b79).
"""
from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pywt
from scipy import special

from wagon import parse_bytes

ROOT = Path(__file__).resolve().parents[1]
LOGS = [ROOT / "tests/data/nasa-aug95-morning.log.gz", ROOT / "tests/data/epa-http-aug95-half.log.gz",
        ROOT / "data/sample-combined.log.gz"]
OCTAVES = range(1, 13)              # 2 s .. 4096 s


def wagon(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "wagon", *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"wagon {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def energies(times: np.ndarray) -> dict[int, tuple[float, int]]:
    """(log₂ mean squared db3 detail, coefficients) of requests per second, per octave."""
    t = np.floor(times - times.min()).astype(np.int64)
    x = np.bincount(t).astype(float)
    out, a = {}, x
    for j in OCTAVES:
        if len(a) < 16:
            break
        d = pywt.downcoef("d", a, "db3", mode="periodization")
        a = pywt.downcoef("a", a, "db3", mode="periodization")
        out[j] = (float(np.log2(np.mean(d * d))), len(d))
    return out


def half_width(n: int) -> float:
    """95 % half-width of log₂ of a mean of n squared Gaussian coefficients (χ²ₙ/n)."""
    return 1.96 * float(np.sqrt(special.polygamma(1, n / 2))) / np.log(2)


def one(log: Path, seed: int, work: Path) -> dict:
    req, _ = parse_bytes(read(log))
    times = np.asarray(req.time, float)
    model = work / "model.json"
    fit = json.loads(wagon("fit", str(log), "-o", str(model), "--json"))
    profile = fit["arrivals"]["profile"]
    span = profile["bin_s"] * len(profile["counts"])
    scenario, synthetic = work / f"s{seed}.jsonl", work / f"s{seed}.log"
    synth = json.loads(wagon("synth", str(model), "--duration", f"{span:.0f}", "--profile",
                             "model", "--seed", str(seed), "-o", str(scenario), "--force",
                             "--json"))
    wagon("export", str(scenario), "--to", "clf", "-o", str(synthetic), "--start",
          f"{np.floor(times.min()):.0f}")
    rows = json.loads(wagon("compare", str(log), str(synthetic), "--json"))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    syn_req, _ = parse_bytes(synthetic.read_bytes())
    e_log, e_syn = energies(times), energies(np.asarray(syn_req.time, float))
    octaves = {j: (e_syn[j][0] - e_log[j][0], half_width(e_log[j][1]))
               for j in e_log if j in e_syn}
    counts = fit["counts"]
    return {"log": log.name, "seed": seed, "log_requests": counts["requests_used"],
            "requests": len(syn_req.time),
            "log_per_click": counts["requests_used"] / counts["clicks"],
            "per_click": len(syn_req.time) / max(synth.get("clicks", 0), 1),
            "differs": [r["row"] for r in rows if r["verdict"] == "differs"],
            "undecided": [r["row"] for r in rows if r["verdict"] == "undecided"],
            "octaves": octaves, "energy_log": e_log, "energy_syn": e_syn}


def plot(runs: list[dict], path: Path) -> None:
    """A panel per log: its energy by octave with the 95 % band, and each seed's synthetic."""
    from matplotlib.figure import Figure
    logs = list(dict.fromkeys(r["log"] for r in runs))
    fig = Figure(figsize=(4 * len(logs), 3.4))
    for k, name in enumerate(logs):
        ax = fig.add_subplot(1, len(logs), k + 1)
        mine = [r for r in runs if r["log"] == name]
        e = mine[0]["energy_log"]
        j = np.array(sorted(e))
        y = np.array([e[i][0] for i in j])
        h = np.array([half_width(e[i][1]) for i in j])
        ax.fill_between(j, y - h, y + h, color="0.85", label="log, 95 %")
        ax.plot(j, y, "k-o", ms=3, label="log")
        for r in mine:
            s = r["energy_syn"]
            ax.plot(sorted(s), [s[i][0] for i in sorted(s)], "--", lw=1,
                    label=f"synthetic, seed {r['seed']}")
        ax.set_title(name.split(".")[0], fontsize=9)
        ax.set_xlabel("octave j (2^j s)")
        if k == 0:
            ax.set_ylabel("log2 energy of requests/s")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--log", action="append", default=[], type=Path)
    ap.add_argument("--plot", type=Path)
    a = ap.parse_args()
    runs = []
    for log in LOGS + a.log:
        for seed in (int(s) for s in a.seeds.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                r = one(log, seed, Path(tmp))
            runs.append(r)
            bad = [j for j, (d, h) in r["octaves"].items() if abs(d) > max(h, 1.0)]
            print(f"{r['log']:32s} seed {seed}: requests {r['requests']:,} / {r['log_requests']:,}"
                  f" = {r['requests'] / r['log_requests']:.3f}; per click {r['per_click']:.2f} / "
                  f"{r['log_per_click']:.2f}; energy Δlog2 by octave "
                  + " ".join(f"{j}:{d:+.2f}" for j, (d, _) in r["octaves"].items())
                  + f"; octaves off {bad or 'none'}")
            print(f"{'':32s}   differs: {', '.join(r['differs']) or 'none'}; undecided: "
                  f"{', '.join(r['undecided']) or 'none'}")
    if a.plot:
        plot(runs, a.plot)


if __name__ == "__main__":
    main()
