"""Child process that holds an embedded Ray on loopback: `python -m rlcheck.embedded_ray`.

It prints one `RLCHECK_RAY_READY {json}` line once the head (and any extra nodes) are up and every
node reports a loopback address, then holds the cluster until stdin closes or SIGTERM arrives, and
shuts it down. A node on a non-loopback address is a loud failure (exit 3), never a silent run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading

LOOPBACK_PREFIX = "127."


def _env() -> None:
    # Ray swaps 127.0.0.1 for the machine's outward address unless this is 0 (see DESIGN.md).
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"


def _start(args: argparse.Namespace):  # -> ray.cluster_utils.Cluster
    from ray.cluster_utils import Cluster

    from rlcheck.wait import free_loopback_port

    # Each node's dashboard agent needs its own port: the default (52365) clashes with any other Ray here.
    head = {"num_cpus": args.num_cpus, "num_gpus": 0, "include_dashboard": True, "dashboard_host": "127.0.0.1",
            "dashboard_port": args.dashboard_port, "node_ip_address": "127.0.0.1",
            "dashboard_agent_listen_port": free_loopback_port()}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for i in range(args.extra_nodes):
        cluster.add_node(num_cpus=args.num_cpus, node_ip_address="127.0.0.1", resources={f"rlcheck_node_{i + 1}": 1},
                         dashboard_agent_listen_port=free_loopback_port())
    cluster.wait_for_nodes()
    return cluster


def _non_loopback(address: str) -> list[str]:
    import ray

    ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    try:
        return [n["NodeManagerAddress"] for n in ray.nodes()
                if n["Alive"] and not n["NodeManagerAddress"].startswith(LOOPBACK_PREFIX)]
    finally:
        ray.shutdown()


def _stop_on_eof(stop: threading.Event) -> None:
    """The parent closes our stdin to stop us (or dies, which closes it too)."""
    sys.stdin.read()
    stop.set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dashboard-port", type=int, required=True)
    parser.add_argument("--num-cpus", type=int, default=2)
    parser.add_argument("--extra-nodes", type=int, default=0)
    parser.add_argument("--temp-dir", default="")
    args = parser.parse_args(argv)
    _env()
    if args.temp_dir:  # everything Ray writes (sessions, sockets, the current-cluster file) stays in here
        os.environ["RAY_TMPDIR"] = args.temp_dir
    cluster = _start(args)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        outside = _non_loopback(cluster.address)
        if outside:
            print(f"RLCHECK_RAY_ERROR nodes on non-loopback addresses: {outside}", flush=True)
            return 3
        ready = {"gcs_address": cluster.address, "dashboard_url": f"http://127.0.0.1:{args.dashboard_port}",
                 "nodes": 1 + args.extra_nodes}
        print("RLCHECK_RAY_READY " + json.dumps(ready), flush=True)
        threading.Thread(target=_stop_on_eof, args=(stop,), daemon=True).start()
        stop.wait()
        return 0
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
