"""How far the engine's timings are from an independent observer and from theory.

1. Mean response time reported by the engine vs a packet capture (tshark on loopback) of the
   same requests, at moderate load against nginx (target: within 100 µs).
2. Emulated links: a 200 KB object to 100 clients at once, each 1.5 Mbit/s / 20 ms: measured
   time vs the theoretical one (two RTTs + upload + 200 KB at 1.5 Mbit/s; target: within 10 %).
3. What the server feels: for WAGON's client classes and a 16 Mbit/s one, three clients each
   fetching an object of 8 s of their link: nginx's own $request_time against the emulated
   transfer time (target: within 15 % when the object is well above the server's send buffer),
   and that buffer as `ss -tm` sees it on nginx's sockets.

    python bench/timing_bench.py [--part 1 2 3]
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon import read_results  # noqa: E402
from wagon.formats.classes import parse_classes  # noqa: E402
from wagon.replay import ReplayOptions, replay  # noqa: E402
from wagon.replay.capture import response_times  # noqa: E402
from parts import run_parts  # noqa: E402
from tests.servers import nginx, write_scenario_file  # noqa: E402


def _rows(path: Path) -> list[dict]:
    return read_results(path).to_dict("records")


def capture(tmp: Path) -> None:
    site = tmp / "site"
    site.mkdir()
    for i in range(20):
        (site / f"p{i}.html").write_bytes(b"p" * (1000 * (i + 1)))
    pages = [(f"/p{i}.html", 1000 * (i + 1), []) for i in range(20)]
    rng = np.random.default_rng(1)
    sessions = [(i * 0.02, 0, [(int(rng.integers(20)), 0.05 * k) for k in range(5)])
                for i in range(400)]
    scenario = write_scenario_file(tmp / "c.jsonl", pages, [], ["lan/http11"], sessions)
    cap = tmp / "cap.pcap"
    with nginx(site, tmp / "ng", access_log=False) as server:
        shark = subprocess.Popen(["tshark", "-i", "lo", "-f", f"tcp port {server.port}", "-w",
                                  str(cap)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
        while "Capturing" not in shark.stderr.readline():
            pass
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp / "r.csv"),
                                                emulation=False))
        time.sleep(0.5)
        shark.send_signal(signal.SIGINT)
        shark.wait(30)
    seen = np.array(response_times(str(cap), server.port))
    df = read_results(tmp / "r.csv")
    sent = df["connected"].where(df["connected"].notna(), df["start"])   # no emulated delay
    ours = (df["last_byte"] - sent).to_numpy()
    rate, diff = s["throughput"]["requests_per_s"], 1e6 * (ours.mean() - seen.mean())
    print(f"1. {len(ours):,} requests at {rate:.0f} req/s: engine mean {1e6 * ours.mean():.1f} "
          f"µs, capture mean {1e6 * seen.mean():.1f} µs ({len(seen):,} exchanges): difference "
          f"{diff:+.1f} µs (target within 100 µs); medians {1e6 * np.median(ours):.1f} vs "
          f"{1e6 * np.median(seen):.1f} µs")


def fidelity(tmp: Path) -> None:
    site = tmp / "big"
    site.mkdir()
    (site / "big.bin").write_bytes(b"\0" * 200_000)
    scenario = write_scenario_file(tmp / "b.jsonl", [("/big.bin", 200_000, [])], [],
                                   ["20ms-1500kbps/http11"],
                                   [(0.001 * i, 0, [(0, 0.0)]) for i in range(100)])
    with nginx(site, tmp / "ng2", access_log=False) as server:
        replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp / "b.csv")))
    rows = _rows(tmp / "b.csv")
    request = 96 + len(str(server.port))
    theory = 0.040 + request * 8 / 1.5e6 + (200_000 + 240) * 8 / 1.5e6
    t = np.array([float(r["last_byte"]) - float(r["intended"]) for r in rows])
    print(f"2. 100 clients x 200 KB at 1.5 Mbit/s, 20 ms: theory {theory * 1e3:.0f} ms, measured "
          f"mean {t.mean() * 1e3:.0f} ms, min {t.min() * 1e3:.0f}, max {t.max() * 1e3:.0f} "
          f"(worst {100 * np.max(np.abs(t / theory - 1)):.1f} % off; target 10 %)")


CLASSES = ("modem", "wan", "t1-dsl", "satellite", "20ms-16000kbps")


def _send_buffers(port: int, seen: list[int], stop: threading.Event) -> None:
    """Sample the send buffer (skmem tb) of nginx's connections every 0.2 s."""
    while not stop.is_set():
        out = subprocess.run(["ss", "-tmn", "state", "established", f"( sport = :{port} )"],
                             capture_output=True, text=True).stdout
        seen.extend(int(x) for x in re.findall(r"\btb(\d+)", out))
        time.sleep(0.2)


def occupancy(tmp: Path) -> None:
    site = tmp / "occ"
    site.mkdir()
    classes = parse_classes(",".join(CLASSES))
    pages = []
    for c in classes:
        size = int(c.network.down_kbps * 125 * 8)               # 8 s of the link
        name = f"/{c.network.name}.bin"
        (site / name[1:]).write_bytes(np.random.default_rng(0).bytes(size))
        pages.append((name, size, []))
    sessions = [(0.3 * k, i, [(i, 0.0)]) for k in range(3) for i in range(len(classes))]
    scenario = write_scenario_file(tmp / "o.jsonl", pages, [], [f"{c.name}/http10x1" for c in
                                                                classes], sessions)
    buffers: list[int] = []
    with nginx(site, tmp / "ng3") as server:
        stop = threading.Event()
        sampler = threading.Thread(target=_send_buffers, args=(server.port, buffers, stop))
        sampler.start()
        replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp / "o.csv")))
        stop.set()
        sampler.join()
        log = server.access()
    df = read_results(tmp / "o.csv")
    print("3. what nginx feels: object of 8 s of the client's link, 3 clients per class")
    for c, (url, size, _) in zip(classes, pages):
        transfer = size / (c.network.down_kbps * 125)
        took = np.array([a.request_time for a in log if a.uri == url])
        ours = df[df["url"] == url]
        got = (ours["last_byte"] - ours["first_byte"]).to_numpy()
        print(f"   {c.network.name:15s} {size / 1e3:8,.0f} KB: emulated transfer {transfer:5.2f} s "
              f"(client {got.mean():5.2f} s), nginx $request_time {took.min():5.2f}-"
              f"{took.max():5.2f} s = {100 * took.min() / transfer:3.0f}-"
              f"{100 * took.max() / transfer:3.0f} %")
    print(f"   nginx's send buffers (ss -tm, skmem tb): median {np.median(buffers) / 1e3:,.0f} KB, "
          f"max {max(buffers) / 1e3:,.0f} KB")


def main() -> None:
    run_parts(__doc__, {1: capture, 2: fidelity, 3: occupancy})


if __name__ == "__main__":
    main()
