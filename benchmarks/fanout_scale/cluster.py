"""One node count: a loopback Ray of N nodes on this machine, held while benchmarks.fanout_scale.measure runs.

The head and every extra node are real Ray nodes (a GCS, then one raylet each with its own object store and agents)
started with ray.cluster_utils.Cluster on 127.0.0.1, each as small as Ray allows: num_cpus=1 (one worker kept warm;
the probe task asks for none), an 80 MiB object store, no dashboard and no log monitor. Before each node it checks
the memory left: below --min-available-gib it stops adding nodes, measures the nodes it has and says why (other
work shares this machine).
Prints one line: RLCHECK_SCALE_SIZE {json}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.fanout_scale.measure import RESULT as MEASURED

RESULT = "RLCHECK_SCALE_SIZE "
ROOT = Path(__file__).resolve().parents[2]
OBJECT_STORE_BYTES = 80 << 20
JOIN_TIMEOUT_S = 180.0
"""How long every added node has to register (Ray's own default, 30 s, is too short for 64 nodes started at once)."""


def available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def status_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


AGENT_PORTS = ("metrics_agent_port", "metrics_export_port", "runtime_env_agent_port", "dashboard_agent_listen_port")


def ports() -> dict[str, int]:
    """Every agent port of a node fixed in advance (see persist_agent_ports)."""
    from rlcheck.process.wait import free_loopback_port

    return {name: free_loopback_port() for name in AGENT_PORTS}


def persist_agent_ports() -> None:
    """A raylet waits a fixed time (about 15 s) for its agents to write their port files, and aborts after it; the
    agents' Python start takes longer than that on a loaded 2-core machine. The ports are fixed in advance
    (ports()), so their files are written here, as the agents would, before each raylet starts."""
    from ray._private import services
    from ray._raylet import persist_port

    start_raylet = services.start_raylet

    def start(*args: Any, **kwargs: Any) -> Any:
        node_id, session_dir = args[2], args[11]  # services.start_raylet's positional order (Ray 2.55)
        for name in AGENT_PORTS:
            if kwargs.get(name):
                persist_port(session_dir, node_id, name, kwargs[name])
        return start_raylet(*args, **kwargs)

    services.start_raylet = start


def start(nodes: int, min_available_mib: float) -> tuple[Any, float, float, list[float], str]:
    """(cluster, seconds to start, MiB of memory it took, seconds each node took to add, why fewer nodes than
    asked: '' when all came up)."""
    from ray.cluster_utils import Cluster

    persist_agent_ports()
    common = {"num_cpus": 1, "object_store_memory": OBJECT_STORE_BYTES, "node_ip_address": "127.0.0.1",
              "include_log_monitor": False}
    before, begin = available_mib(), time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={**common, **ports(), "include_dashboard": False})
    each, short = [], ""
    try:
        for i in range(1, nodes):
            if (left := available_mib()) < min_available_mib:
                short = (f"{left:.0f} MiB of memory available after {i} node(s), below the floor of "
                         f"{min_available_mib:.0f} MiB ({(before - left) / i:.0f} MiB per node so far)")
                break
            t = time.perf_counter()
            cluster.add_node(**common, **ports(), resources={f"fake_node_{i}": 1})
            each.append(round(time.perf_counter() - t, 2))
        cluster.wait_for_nodes(timeout=JOIN_TIMEOUT_S)
    except BaseException:
        cluster.shutdown()
        raise
    return cluster, time.perf_counter() - begin, before - available_mib(), each, short


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hold-s", type=float, required=True)
    parser.add_argument("--observation", required=True)
    parser.add_argument("--min-available-gib", type=float, default=5.0)
    args = parser.parse_args(argv)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # keep every node on 127.0.0.1 (see DESIGN.md)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # How long this process waits for a raylet to register; on a loaded 2-core machine it can be late.
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "120")
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"  # workers import the stand-in
    tmp = tempfile.mkdtemp(prefix="rlscale-", dir="/tmp")  # short: Ray's socket paths are length-limited
    os.environ["RAY_TMPDIR"] = tmp
    cluster, start_s, took_mib, each, short = start(args.nodes, args.min_available_gib * 1024)
    nodes = 1 + len(each)
    doc: dict[str, Any] = {"nodes_asked": args.nodes, "nodes": nodes, "fewer_nodes_because": short}
    try:
        gcs = cluster.head_node.all_processes["gcs_server"][0].process.pid
        gcs_before = status_kib(gcs)
        argv = [sys.executable, "-m", "benchmarks.fanout_scale.measure", "--address", cluster.address, "--nodes",
                str(nodes), "--rounds", str(args.rounds), "--hold-s", str(args.hold_s), "--observation",
                args.observation]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
        line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(MEASURED)), None)
        if line is None:
            doc |= {"reached": False, "why": f"measure gave no result (exit {done.returncode}): "
                                             f"{done.stderr.strip()[-800:]}"}
        else:
            doc |= {"reached": True, **json.loads(line.removeprefix(MEASURED))}
        gcs_after = status_kib(gcs)
        doc |= {"cluster_start_s": round(start_s, 1), "node_add_s": each,
                "cluster_memory_mib": round(took_mib), "cluster_memory_mib_per_node": round(took_mib / nodes),
                "gcs_rss_kib_before": gcs_before["VmRSS"], "gcs_rss_kib_after": gcs_after["VmRSS"],
                "gcs_peak_rss_kib": gcs_after["VmHWM"]}
    finally:
        cluster.shutdown()
    print(RESULT + json.dumps(doc), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
