"""Ray for the suite: an embedded loopback Ray (a child process holding it), or the user's --ray-address."""

from __future__ import annotations

import dataclasses
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence

from rlcheck.process import subproc
from rlcheck.process.wait import free_loopback_port, wait_http_ok

READY, ERROR = "RLCHECK_RAY_READY ", "RLCHECK_RAY_ERROR "
RAY_START_TIMEOUT = "The current node timed out during startup"
"""Ray's words (ray/_private/node.py) when a node's raylet does not register with the GCS within its fixed 30 s:
what a loaded host does to a start that is otherwise fine."""
START_ATTEMPTS = 2


class EmbeddedRayError(RuntimeError):
    """The embedded Ray did not come up; the message has why and the child's last lines."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RayEndpoints:
    gcs_address: str
    """host:port for ray.init(address=...)."""
    dashboard_url: str
    """http://host:port for the Jobs API (JobSubmissionClient, `ray job submit --address`)."""
    nodes: int
    node_ids: tuple[str, ...] = ()
    """Ray node ids (hex): the head first, then the extra nodes in the order they were asked for."""
    raylet_pids: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """Each node's raylet process id by node id (tests stop or kill one to make a node silent or dead)."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeSpec:
    """One extra node of an embedded Ray: what it advertises and what its processes see."""

    num_gpus: int = 0
    """GPUs the node advertises to Ray (a logical count: Ray does not look for them)."""
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Variables set over the holder's environment for this node's raylet and its workers."""

    def __post_init__(self) -> None:
        if self.num_gpus < 0:
            raise ValueError(f"num_gpus={self.num_gpus}: must be >= 0")

    def to_dict(self) -> dict[str, object]:
        return {"num_gpus": self.num_gpus, "env": dict(self.env)}


class EmbeddedRay:
    """A single-machine Ray on 127.0.0.1 (plus extra_nodes worker nodes) held by a child process.

    Use as a context manager; stop() always tears it down (SIGTERM to the holder, then the group).
    node_specs: the first len(node_specs) extra nodes (extra_nodes grows to at least that many).
    dashboard: False for a head without Ray's dashboard (so without the Jobs API), up sooner: for users of its GCS
    alone; start(jobs=True) and ensure_jobs then raise EmbeddedRayError saying so.
    """

    def __init__(self, *, num_cpus: int = 2, extra_nodes: int = 0, start_timeout_s: float = 180.0,
                 node_specs: Sequence[NodeSpec] = (), dashboard: bool = True) -> None:
        self.num_cpus, self.dashboard = num_cpus, dashboard
        self.extra_nodes, self.node_specs = max(extra_nodes, len(node_specs)), tuple(node_specs)
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[str] | None = None
        self.endpoints: RayEndpoints | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._seen: list[str] = []
        self._jobs = threading.Lock()
        self._jobs_ready = False
        self.retries: list[str] = []
        """Why each start before the last one failed (Ray's own start deadline passed)."""

    def start(self, *, jobs: bool = True) -> RayEndpoints:
        """Start it and wait until it answers; jobs: also until its job agent takes jobs (ensure_jobs), which only
        a user of the Jobs API needs (a GCS client, such as the cluster checks' fan-out, does not). A start that
        Ray itself gave up on (a raylet past Ray's own fixed 30 s, on a loaded host) is tried once more on a fresh
        holder, the first one's process group killed; the failures are kept in `retries`."""
        if jobs:
            self._refuse_jobs_without_dashboard()
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                return self._start_once(jobs=jobs)
            except EmbeddedRayError as exc:
                if attempt == START_ATTEMPTS or RAY_START_TIMEOUT not in str(exc):
                    raise
                self.retries.append(str(exc))
                if self.proc is not None:
                    subproc.kill_group(self.proc)  # what the holder left: its GCS, raylet and dashboard
                self._lines, self._seen = queue.Queue(), []
        raise AssertionError("unreachable")

    def _start_once(self, *, jobs: bool) -> RayEndpoints:
        temp_dir = tempfile.mkdtemp(prefix="rlray-", dir="/tmp")  # short: Ray's socket paths are length-limited
        dashboard = ["--dashboard-port", str(free_loopback_port())] if self.dashboard else ["--no-dashboard"]
        argv = [sys.executable, "-m", "rlcheck.cluster.embedded_ray", *dashboard,
                "--num-cpus", str(self.num_cpus), "--extra-nodes", str(self.extra_nodes), "--temp-dir", temp_dir]
        if self.node_specs:
            argv += ["--node-specs", json.dumps([spec.to_dict() for spec in self.node_specs])]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True, env=subproc.child_env())
        threading.Thread(target=self._pump, daemon=True).start()
        try:
            self.endpoints = self._await_ready()
            if self.dashboard:
                health = wait_http_ok(f"{self.endpoints.dashboard_url}/api/version", timeout_s=60)
                if not health.ok:
                    raise EmbeddedRayError(f"Ray dashboard not answering after 60 s: {health.last_error}")
            if jobs:
                self.ensure_jobs()
        except BaseException:
            self.stop()
            raise
        return self.endpoints

    def ensure_jobs(self, timeout_s: float = 90.0) -> None:
        """Wait (once, whoever asks first) until the job agent takes jobs; EmbeddedRayError when it does not, or when
        this Ray has no dashboard."""
        self._refuse_jobs_without_dashboard()
        with self._jobs:
            if not self._jobs_ready:
                self._await_job_agent(timeout_s=timeout_s)
                self._jobs_ready = True

    def _refuse_jobs_without_dashboard(self) -> None:
        if not self.dashboard:
            raise EmbeddedRayError("this embedded Ray was started without its dashboard (dashboard=False), so without "
                                   "Ray's Jobs API: start one with its dashboard to submit jobs")

    def _await_job_agent(self, timeout_s: float) -> None:
        """A fresh head answers `No available agent` until its job agent registers, and the CLI does not
        retry: run one trivial job (submission retried) so that users of this Ray find it ready."""
        from rlcheck.cluster import launch

        assert self.endpoints is not None
        job = launch.submit_entrypoint(self.endpoints.dashboard_url, "true")
        outcome = launch.wait_job(self.endpoints.dashboard_url, job, timeout_s=timeout_s)
        if outcome.status != "SUCCEEDED":
            raise EmbeddedRayError(f"Ray's first job did not succeed within {timeout_s:.0f} s: {outcome.status}")

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _await_ready(self) -> RayEndpoints:
        deadline = time.monotonic() + self.start_timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise EmbeddedRayError(f"embedded Ray exited before it was ready:\n{self._tail()}")
            self._seen.append(line)
            if line.startswith(ERROR):
                raise EmbeddedRayError(line.removeprefix(ERROR))
            if line.startswith(READY):
                ready = json.loads(line.removeprefix(READY))
                return RayEndpoints(**{**ready, "node_ids": tuple(ready.get("node_ids", ()))})
        raise EmbeddedRayError(f"embedded Ray not ready within {self.start_timeout_s:.0f} s:\n{self._tail()}")

    def _tail(self) -> str:
        return "\n".join(self._seen[-20:])

    def stop(self, timeout_s: float = 60.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=timeout_s)
        except (subprocess.TimeoutExpired, OSError):
            subproc.kill_group(self.proc)

    def __enter__(self) -> RayEndpoints:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
