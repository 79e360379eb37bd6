"""One log's replay at several speed-ups K, one seed (issue 35): is a deviation of the replay
from its export the model's or the replay's own timing? ``fidelity_bench``'s export and replay
of the same model and sessions at each K (Apache or nginx's own log read back), printed with
the log's and the export's acf of requests per second, their acf 1–10 gap, a client's first
gap (its first request to its second: a page to its first object, mostly), the clicks wagon
reads back of those synth made (more: a click split in two), the replay's exchange times
against Tmin and the compare rows that differ. docs/fidelity.md, "netnea's replay at half the
speed-up" and "The speed-up a replay can keep".

    python bench/replay_speedup.py --log labor07.log --seed 2 --speedups 2499,1250

With ``--duration`` the synthetic traffic is a slice of the log's span (a quick look at the
clicks and the exchange at several K; its compare rows then hold a slice against a whole).
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

import fidelity_bench as fb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--speedups", required=True, help="K values, comma-separated")
    ap.add_argument("--duration", type=float,
                    help="the synthetic traffic's (s): a slice, the log's span by default")
    a = ap.parse_args()
    log_req, _ = fb.parse_bytes(fb.read(a.log))
    log_req = log_req.take(np.flatnonzero(fb.sessionize_kept(log_req)[1]))   # robots out
    acf = lambda t: np.round(fb.acf(np.asarray(t, float))[:3], 3).tolist()   # noqa: E731
    print(f"{a.log.name}: log acf(1-3) {acf(log_req.time)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = work / "model.json"
        fit = json.loads(fb.wagon("fit", str(a.log), "-o", str(model), "--json"))
        e = fb.exported(a.log, model, fit, a.seed, work, log_req, a.duration)
        syn, _ = fb.parse_bytes((work / f"s{a.seed}.log").read_bytes())
        print(f"  export: acf(1-3) {acf(syn.time)}, gap {e['acf_gap']:.3f}, first gap "
              f"{e['first_gap'][1]:.2f} s (log {e['first_gap'][0]:.2f}), clicks read "
              f"{e['clicks'][1]:,} of {e['clicks'][0]:,} made, differs: "
              f"{', '.join(e['differs']) or 'none'}", flush=True)
        first = float(np.floor(np.min(log_req.time)))
        for k in (float(x) for x in a.speedups.split(",")):
            run = work / f"k{k:g}"
            run.mkdir()
            r = fb.replayed(a.log, model, fit, a.seed, k, run, log_req, first, a.duration)
            served, _ = fb.parse_bytes((run / "server.log").read_bytes())
            print(f"  replay K={k:g} ({r['replay_s']:.0f} s on {r['server']}): acf(1-3) "
                  f"{acf(served.time)}, gap {r['acf_gap']:.3f}, first gap "
                  f"{r['first_gap'][1]:.2f} s, clicks read {r['clicks'][1]:,}, requests "
                  f"{r['replay_requests']}, {fb.exchange(r)}, differs: "
                  f"{', '.join(r['differs']) or 'none'}", flush=True)


if __name__ == "__main__":
    main()
