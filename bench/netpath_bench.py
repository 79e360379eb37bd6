"""The packet path (``--network packet``) against physics, against nginx, and its own cost.

1. tcping: the best of 10 TCP connects per WAGON class against RTT + SYN/SYN-ACK serialization;
2. a 6 MB bulk transfer over 20 ms / 8 Mbit/s: payload rate × MTU/MSS against the link rate;
3. Reno under random loss p (both ways) at RTT R: throughput against Mathis et al.'s
   MSS / (R·sqrt(2p/3)), several (p, R);
4. the server feels the transfer: nginx's $request_time over the time it would spend if it
   felt all of it (the client's request-to-last-byte time less one RTT) by object size and class, and the byte-weighted ratio over objects drawn from the bundled
   NASA trace's (tests/data) response sizes;
6. the S-Client experiment (Banga & Druschel 1999): HTTP/1.0 clients at a fixed rate and RTT
   0–200 ms; the connections Apache (busy workers, 1 KB pages, 40/s) and nginx (reading +
   writing, 256 KB objects at 10 Mbit/s, 10/s) hold, against Little's law from their own logs,
   with --network packet and --network client side by side;
7. part 4's table again with --network client (the engine's in-process emulation, a session
   per object, through `wagon replay`): what the server feels when only the client is
   emulated;
8. the load at which the relay distorts: 8 downloads at once over 20 ms paths of B each, B from
   10 to 200 Mbit/s: the relay's lag (mean, max, share of packets over 1 ms late) and the
   flows' rate past slow start against B;
5. cost: packets relayed per CPU second of the relay (its /proc utime+stime) at saturation
   (a LAN-speed path), beside the same transfer over plain loopback; the relay's state for
   10,000 clients (tracemalloc of ``Relay.take`` fed 10,000 addresses).

    sudo python bench/netpath_bench.py [--part 1 2 3 4 5 6 7 8]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon.formats.classes import NETWORKS, parse_classes  # noqa: E402
from wagon.replay.netpath import PacketPath, PathOptions, relay_config  # noqa: E402
from wagon.replay.relay import Relay  # noqa: E402
from tests.servers import (Sender, bound_client, download, nginx, steady_rate,  # noqa: E402
                           write_scenario_file)
from wagon.formats.results import read_results  # noqa: E402
from wagon.replay import ReplayOptions, replay  # noqa: E402
from tests.test_netpath import held_connections, mathis  # noqa: E402

SYN = 60


def fetch(source: str | None, port: int, request: bytes, rtt: float) -> float:
    """The time the server would spend on one request if it felt the whole transfer: from the
    request's arrival (R/2 after its send) to the last byte's leaving (R/2 before it came)."""
    marks = download(source, port, request)
    return marks[-1][0] - marks[0][0] - rtt


def part1() -> None:
    print("| class | RTT + serialization (ms) | best of 10 connects (ms) | difference (ms) |")
    print("|---|---:|---:|---:|")
    server = Sender()
    for name in ("modem", "t1-dsl", "wan", "satellite"):
        net = NETWORKS[name]
        want = net.rtt_ms + 1000 * SYN / (net.up_kbps * 125) + 1000 * SYN / (net.down_kbps * 125)
        times = []
        with PacketPath([net]) as path, path.inside():
            for k in range(10):
                s = bound_client(path.sources().address(k, 0))
                t = time.perf_counter()
                s.connect(("127.0.0.1", server.port))
                times.append(1000 * (time.perf_counter() - t))
                s.close()
        print(f"| {name} | {want:.2f} | {min(times):.2f} | {min(times) - want:+.2f} |")


def part2() -> None:
    net = parse_classes("20ms-8000kbps")[0].network
    size = 6_000_000
    server = Sender(size)
    with PacketPath([net]) as path, path.inside():
        marks = download(path.sources().address(0, 0), server.port)
    rate = steady_rate(marks) * 8 / 1000
    print(f"bulk 6 MB over 20 ms / 8000 kbit/s: wire rate past slow start {rate:.0f} kbit/s "
          f"({100 * (rate / 8000 - 1):+.2f} %); relay {path.report}")


def part3() -> None:
    print("| p | R (ms) | Mathis (kbit/s) | measured (kbit/s) | ratio | losses |")
    print("|---:|---:|---:|---:|---:|---:|")
    for p, rtt in ((0.01, 0.02), (0.02, 0.02), (0.01, 0.05), (0.02, 0.1), (0.05, 0.05)):
        law, rate, lost = mathis(p, rtt, losses=400, seed=11)
        print(f"| {p} | {rtt * 1000:g} | {law * 8 / 1000:.0f} | {rate * 8 / 1000:.0f} | "
              f"{rate / law:.2f} | {lost} |")


def nasa_sizes(n: int) -> list[int]:
    """``n`` response sizes drawn from the NASA trace's 200 answers (tests/data, seeded)."""
    import gzip
    import random
    import re
    sample = ROOT / "tests" / "data" / "nasa-aug95-morning.log.gz"
    sizes = []
    with gzip.open(sample, "rt", errors="replace") as f:
        for line in f:
            m = re.search(r'" 200 (\d+)$', line.strip())
            if m and int(m[1]) > 0:
                sizes.append(int(m[1]))
    return random.Random(5).sample(sizes, n)


SIZES_KB = (16, 32, 64, 128, 256, 512, 1024)


def objects(root: Path) -> list[int]:
    """Write the sized objects f{KB}.bin and the NASA mix n{i}.bin under ``root``; the mix."""
    for kb in SIZES_KB:
        (root / f"f{kb}.bin").write_bytes(os.urandom(kb * 1024))
    mix = nasa_sizes(60)
    for i, size in enumerate(mix):
        (root / f"n{i}.bin").write_bytes(os.urandom(size))
    return mix


def wanted(net, mix: list[int]) -> list[tuple[str, bool]]:
    """The objects a class fetches (on the slow ones only those under 20 s): (name, in the
    NASA mix)."""
    fast = net.down_kbps >= 1000
    sizes = SIZES_KB if fast else SIZES_KB[:4]
    picks = range(len(mix)) if fast else [i for i, s in enumerate(mix) if s < 60_000][:30]
    return [(f"f{kb}", False) for kb in sizes] + [(f"n{i}", True) for i in picks]


def felt_row(name: str, pairs: list[tuple[float, float, bool]]) -> str:
    """A table row from (felt, full, in the mix) per object, in ``wanted``'s order."""
    cells = [f"{f / full:.2f}" for f, full, mixed in pairs if not mixed]
    cells += ["–"] * (len(SIZES_KB) - len(cells))
    mixed = [(f, full) for f, full, m in pairs if m]
    ratio = sum(f for f, _ in mixed) / sum(full for _, full in mixed)
    return f"| {name} | " + " | ".join(cells) + f" | {ratio:.2f} ({len(mixed)} objects) |"


def felt_header() -> None:
    print("| class | " + " | ".join(f"{kb} KB" for kb in SIZES_KB) +
          " | NASA mix, byte-weighted |")
    print("|---|" + "---:|" * (len(SIZES_KB) + 1))


def part4() -> None:
    root = Path(tempfile.mkdtemp())
    mix = objects(root)
    felt_header()
    for name in ("modem", "t1-dsl", "wan", "satellite"):
        net = NETWORKS[name]
        pairs = []
        with nginx(root, Path(tempfile.mkdtemp())) as ng, PacketPath([net]) as path:
            with path.inside():
                for n, (obj, mixed) in enumerate(wanted(net, mix)):
                    full = fetch(path.sources().address(n, 0), ng.port,
                                 f"GET /{obj}.bin HTTP/1.0\r\n\r\n".encode(), net.rtt_ms / 1e3)
                    pairs.append((ng.access(expect=n + 1)[-1].request_time, full, mixed))
        print(felt_row(name, pairs))


def part7() -> None:
    root = Path(tempfile.mkdtemp())
    mix = objects(root)
    felt_header()
    for name in ("modem", "t1-dsl", "wan", "satellite"):
        net = NETWORKS[name]
        objs = wanted(net, mix)
        sizes = [(root / f"{o}.bin").stat().st_size for o, _ in objs]
        tmp = Path(tempfile.mkdtemp())
        scenario = write_scenario_file(
            tmp / "s.jsonl", [(f"/{o}.bin", size, []) for (o, _), size in zip(objs, sizes)], [],
            [f"{name}/http10x1"], [(0.3 * i, 0, [(i, 0.0)]) for i in range(len(objs))])
        with nginx(root, tmp / "ng") as ng:
            replay(str(scenario), ReplayOptions(target=ng.url, results=str(tmp / "r.csv")))
            felt = {a.uri: a.request_time for a in ng.access(expect=len(objs))}
        got = read_results(str(tmp / "r.csv")).set_index("url")
        up = net.up_kbps * 125
        pairs = []
        for o, mixed in objs:
            r = got.loc[f"/{o}.bin"]
            request = 80 / up                       # the request's upload, about 80 bytes
            full = r["last_byte"] - r["connected"] - net.rtt_ms / 1e3 - request
            pairs.append((felt[f"/{o}.bin"], full, mixed))
        print(felt_row(name, pairs))


def _cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def part5() -> None:
    size = 200_000_000
    server = Sender(size)
    best_plain = best_path = 0.0
    for _ in range(3):
        marks = download(None, server.port)
        best_plain = max(best_plain, size / (marks[-1][0] - marks[1][0]))
        with PacketPath([NETWORKS["lan"]]) as path:
            relay = path._relay.pid
            with path.inside():
                cpu0 = _cpu(relay)
                marks = download(path.sources().address(0, 0), server.port)
                cpu = _cpu(relay) - cpu0
        rate = size / (marks[-1][0] - marks[1][0])
        pps = path.report["packets"] / cpu
        best_path = max(best_path, rate)
        print(f"through the path {rate * 8 / 1e6:.0f} Mbit/s, {path.report['packets']:,} "
              f"packets, relay CPU {cpu:.2f} s: {pps:,.0f} packets per CPU second; lag max "
              f"{path.report['lag_max_ms']} ms")
    print(f"best: path {best_path * 8 / 1e6:.0f} Mbit/s, plain loopback "
          f"{best_plain * 8 / 1e6:.0f} Mbit/s")
    cfg = relay_config([NETWORKS["t1-dsl"]], 0xC6120000, 15, PathOptions())
    relay = Relay.from_config(cfg, (-1, -1))
    packet = bytearray(60)
    packet[0] = 0x45
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for k in range(10_000):
        packet[12:16] = (0xC6120001 + k).to_bytes(4, "big")
        relay.take(bytes(packet), True, 0.0)
    relay.due.clear()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    print(f"relay state for {len(relay.links):,} clients: {grown / 1e6:.2f} MB "
          f"({grown / len(relay.links):.0f} bytes each)")


def part6() -> None:
    tmp = Path(tempfile.mkdtemp())
    print("| server | RTT (ms) | packet: held | Little's law | client: held | Little's law |")
    print("|---|---:|---:|---:|---:|---:|")
    for server, size, rate, kbps in (("apache", 1024, 40, 100_000),
                                     ("nginx", 256 * 1024, 10, 10_000)):
        for rtt in (0, 50, 100, 200):
            cells = []
            for network in ("packet", "client"):
                held, law = held_connections(tmp, server, rtt, network, size, rate, 6, kbps)
                cells += [f"{held:.2f}", f"{law:.2f}"]
            print(f"| {server} | {rtt} | " + " | ".join(cells) + " |")


def part8() -> None:
    from concurrent.futures import ThreadPoolExecutor
    print("| B per flow (Mbit/s) | offered (Mbit/s) | packets/s | lag mean (ms) | lag max (ms) |"
          " late > 1 ms | rate / B (min, median) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    flows = 8
    for mbps in (10, 25, 50, 100, 200):
        net = parse_classes(f"20ms-{mbps * 1000}kbps")[0].network
        size = int(mbps * 1e6 / 8 * 3)                    # 3 s at the link's rate
        server = Sender(size)
        with PacketPath([net]) as path, path.inside():
            pool = path.sources()
            t0 = time.perf_counter()
            with ThreadPoolExecutor(flows) as ex:
                runs = list(ex.map(lambda k: download(pool.address(k, 0), server.port),
                                   range(flows)))
            took = time.perf_counter() - t0
        rates = sorted(steady_rate(m) / (mbps * 1e6 / 8) for m in runs)
        r = path.report
        print(f"| {mbps} | {flows * mbps} | {r['packets'] / took:,.0f} | {r['lag_mean_ms']:.3f} | "
              f"{r['lag_max_ms']:.1f} | {100 * r['late'] / r['packets']:.1f} % | "
              f"{rates[0]:.2f}, {rates[len(rates) // 2]:.2f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", type=int, nargs="*", default=[1, 2, 3, 4, 5, 6, 7, 8])
    for part in ap.parse_args().part:
        print(f"\n## part {part}")
        globals()[f"part{part}"]()
