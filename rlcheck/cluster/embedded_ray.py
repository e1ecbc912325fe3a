"""Child process that holds an embedded Ray on loopback: `python -m rlcheck.cluster.embedded_ray`.

It prints one `RLCHECK_RAY_READY {json}` line once the head (and any extra nodes) are up and every
node reports a loopback address, then holds the cluster until stdin closes, its parent dies or SIGTERM arrives, and
shuts it down. A node on a non-loopback address is a loud failure (exit 3), never a silent run.

Its dashboard loads only the modules that the Jobs API needs (DASHBOARD_MODULES: JobHead, and NodeHead, through
which the job head finds a node's agent to run the job on): the other seven (metrics, data, events, serve, train,
state, reports) start a process each and cost a 2-core machine about 15 s of CPU per head for nothing rlcheck
reads. RLCHECK_RAY_DASHBOARD_MODULES=all starts them all; another comma-separated list loads that list. With
--no-dashboard Ray still starts its dashboard process, with its own usage-stats module alone (no Jobs API, no
frontend; the READY line's dashboard_url is empty): a cluster whose users reach only its GCS (the cluster checks'
fan-out) is up sooner.

It stops without Ray's graceful drain (each node's processes killed, worker nodes first, then every other process
of its own process group: the agents a raylet started, which outlive a killed raylet and spin): nothing it ran is
still needed when its parent stops it, and the drain cost a second of every run's end.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path

LOOPBACK_PREFIX = "127."
DASHBOARD_MODULES = "JobHead,NodeHead"
QUIET_NODE = {"include_log_monitor": False}
"""No log monitor on any node: it streams workers' prints to a driver's terminal, and no driver here shows them (a
job's own logs come from its log file, through the job agent). With the head's no_monitor (the autoscaler's monitor:
this cluster never scales), two Python processes fewer per head, about 3 s of CPU on a 2-core machine."""


def _env() -> None:
    # Ray swaps 127.0.0.1 for the machine's outward address unless this is 0 (see DESIGN.md).
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # The dashboard gives each of its module processes 30 s to start (ray/dashboard/consts.py); on a loaded
    # 2-core machine they can take longer and the head dies with "Module MetricsHead failed to start".
    os.environ.setdefault("RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT", "150")
    # No idle workers prestarted: a raylet starts one per CPU when the first driver connects (the holder's own
    # loopback check is one), a Python process importing Ray each, about 0.9 s of CPU. A job's supervisor never uses
    # them (it starts in a worker of its own runtime env); a task (the cluster checks' fan-out) gets one when it asks.
    os.environ.setdefault("RAY_prestart_worker_first_driver", "0")


def dashboard_modules() -> str | None:
    """The dashboard modules to load, or None for Ray's default (all of them)."""
    chosen = os.environ.get("RLCHECK_RAY_DASHBOARD_MODULES", DASHBOARD_MODULES).strip()
    return None if chosen in ("", "all") else chosen


def _trim_dashboard(modules: str | None) -> None:
    """Start Ray's dashboard with --modules-to-load (dashboard.py's own option, which ray.init does not expose)."""
    if modules is None:
        return
    from ray._private import ray_constants, services

    start = services.start_ray_process

    def start_ray_process(command, process_type, *args, **kwargs):
        if process_type == ray_constants.PROCESS_TYPE_DASHBOARD and not any(
                str(c).startswith("--modules-to-load") for c in command):
            command = [*command, f"--modules-to-load={modules}"]
        return start(command, process_type, *args, **kwargs)

    services.start_ray_process = start_ray_process


def _start(args: argparse.Namespace):  # -> (ray.cluster_utils.Cluster, [ray._private.node.Node])
    from ray.cluster_utils import Cluster

    from rlcheck.process.wait import free_loopback_port

    _trim_dashboard(dashboard_modules())
    # Each node's dashboard agent needs its own port: the default (52365) clashes with any other Ray here.
    head: dict[str, object] = {"num_cpus": args.num_cpus, "num_gpus": 0, "include_dashboard": not args.no_dashboard,
                               "node_ip_address": "127.0.0.1", "dashboard_agent_listen_port": free_loopback_port(),
                               **QUIET_NODE, "no_monitor": True}
    if not args.no_dashboard:
        head |= {"dashboard_host": "127.0.0.1", "dashboard_port": args.dashboard_port}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    specs, nodes = json.loads(args.node_specs), [cluster.head_node]
    for i in range(args.extra_nodes):
        spec = specs[i] if i < len(specs) else {}
        # env_vars reach the node's raylet and, through it, every worker it starts.
        node_args = {"num_cpus": args.num_cpus, "node_ip_address": "127.0.0.1", "num_gpus": spec.get("num_gpus", 0),
                     "resources": {f"rlcheck_node_{i + 1}": 1}, "env_vars": spec.get("env") or None, **QUIET_NODE}
        nodes.append(_add_node(cluster, node_args))
    cluster.wait_for_nodes()
    return cluster, nodes


def _add_node(cluster, node_args: dict, attempts: int = 3):  # -> ray._private.node.Node
    """A raylet gives its dashboard agent a fixed time to start; on a loaded machine that can pass: try again."""
    from rlcheck.process.wait import free_loopback_port

    for attempt in range(1, attempts + 1):
        try:
            return cluster.add_node(**node_args, dashboard_agent_listen_port=free_loopback_port())
        except Exception as exc:  # Ray raises a bare Exception when a node times out at start
            if attempt == attempts:
                raise
            print(f"extra node did not start (attempt {attempt} of {attempts}): {exc}", flush=True)
    raise AssertionError("unreachable")


def _node_processes(nodes: list) -> dict[str, object]:  # nodes: ray._private.node.Node, head first
    """Node ids (head first, then extra nodes in order) and each node's raylet pid."""
    pids = {node.node_id: node.all_processes["raylet"][0].process.pid for node in nodes}
    return {"node_ids": [node.node_id for node in nodes], "raylet_pids": pids}


def _stop_cluster(cluster) -> None:  # cluster: ray.cluster_utils.Cluster
    """Kill every node's processes, worker nodes first, without Ray's graceful drain (Cluster.shutdown's)."""
    for node in list(cluster.worker_nodes):
        cluster.remove_node(node, allow_graceful=False)
    if cluster.head_node is not None:
        cluster.remove_node(cluster.head_node, allow_graceful=False)


def group_members(group: int | None = None, proc: Path = Path("/proc")) -> list[int]:
    """The processes of a process group (default: this process's own, this process left out), read from /proc (an
    entry that vanished meanwhile is skipped)."""
    me, group = os.getpid(), os.getpgrp() if group is None else group
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # after the name (it may hold spaces and ")"): state ppid pgrp
        if len(fields) > 2 and fields[2] == str(group):
            members.append(int(entry.name))
    return members


def _kill_leftovers(proc: Path = Path("/proc")) -> list[int]:
    """SIGKILL what is left of this holder's process group (the raylets' agents); only when the holder leads a group
    of its own (EmbeddedRay starts it in a new session), never a group it shares with a shell's other jobs."""
    if os.getpgrp() != os.getpid():
        return []
    killed = []
    for pid in group_members(proc=proc):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed.append(pid)
    return killed


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


def _stop_when_orphaned(stop: threading.Event, parent: int, poll_s: float = 0.5) -> None:
    """The parent died while another process still holds our stdin open: stop all the same (no orphan Ray)."""
    while not stop.wait(poll_s):
        if os.getppid() != parent:
            stop.set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dashboard-port", type=int, help="the dashboard's port (needed unless --no-dashboard)")
    parser.add_argument("--no-dashboard", action="store_true", help="no dashboard: no Jobs API, only the GCS")
    parser.add_argument("--num-cpus", type=int, default=2)
    parser.add_argument("--extra-nodes", type=int, default=0)
    parser.add_argument("--temp-dir", default="")
    parser.add_argument("--node-specs", default="[]", help="JSON list of {num_gpus, env}, one per extra node")
    args = parser.parse_args(argv)
    if args.dashboard_port is None and not args.no_dashboard:
        parser.error("--dashboard-port is needed unless --no-dashboard is given")
    _env()
    if args.temp_dir:  # everything Ray writes (sessions, sockets, the current-cluster file) stays in here
        os.environ["RAY_TMPDIR"] = args.temp_dir
    parent = os.getppid()
    cluster, nodes = _start(args)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        outside = _non_loopback(cluster.address)
        if outside:
            print(f"RLCHECK_RAY_ERROR nodes on non-loopback addresses: {outside}", flush=True)
            return 3
        dashboard = "" if args.no_dashboard else f"http://127.0.0.1:{args.dashboard_port}"
        ready = {"gcs_address": cluster.address, "dashboard_url": dashboard,
                 "nodes": 1 + args.extra_nodes, **_node_processes(nodes)}
        print("RLCHECK_RAY_READY " + json.dumps(ready), flush=True)
        threading.Thread(target=_stop_on_eof, args=(stop,), daemon=True).start()
        threading.Thread(target=_stop_when_orphaned, args=(stop, parent), daemon=True).start()
        stop.wait()
        return 0
    finally:
        try:
            _stop_cluster(cluster)
        finally:
            _kill_leftovers()


if __name__ == "__main__":
    sys.exit(main())
