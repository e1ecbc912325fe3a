"""Rule table for the child that holds an embedded loopback Ray (rlcheck.cluster.embedded_ray): the dashboard modules
it loads (the default pair, all, a list), the option it adds to the dashboard's command once, the head's and each
extra node's arguments (a node's spec, a retry of a node that did not start), the raylet pids it reports, a node off
loopback as exit 3 with its line, the READY line, and the stop when stdin closes or the parent dies. Stand-in Ray
modules in sys.modules; no Ray starts (test_embedded_ray_dashboard.py starts a real one)."""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
import types

import pytest

from rlcheck.cluster import embedded_ray as er


@pytest.fixture
def env(monkeypatch):
    for name in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED", "RLCHECK_RAY_DASHBOARD_MODULES",
                 "RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT", "RAY_TMPDIR",
                 "RAY_prestart_worker_first_driver"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_environment_keeps_ray_on_loopback_and_quiet(env):
    er._env()
    assert {k: er.os.environ[k] for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED",
                                         "RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT",
                                         "RAY_prestart_worker_first_driver")} == {
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT": "150",
        "RAY_prestart_worker_first_driver": "0"}  # no idle worker: a task gets one when it asks


@pytest.mark.parametrize(("name", "value"), [("RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT", "30"),
                                             ("RAY_prestart_worker_first_driver", "1")])
def test_a_setting_the_caller_made_is_kept(env, name, value):
    env.setenv(name, value)
    er._env()
    assert er.os.environ[name] == value


@pytest.mark.parametrize(("value", "modules"), [
    (None, "JobHead,NodeHead"), ("all", None), ("", None), ("  all ", None), (" JobHead ", "JobHead"),
    ("A,B,C", "A,B,C"),
])
def test_the_dashboard_modules_loaded(env, value, modules):
    if value is not None:
        env.setenv("RLCHECK_RAY_DASHBOARD_MODULES", value)
    assert er.dashboard_modules() == modules


@pytest.fixture
def services(monkeypatch):
    """ray._private.services and ray_constants as _trim_dashboard patches them."""
    calls: list = []
    services = types.SimpleNamespace(start_ray_process=lambda command, process_type, *a, **kw: calls.append(
        (command, process_type, a, kw)) or "proc")
    constants = types.SimpleNamespace(PROCESS_TYPE_DASHBOARD="dashboard")
    private = types.SimpleNamespace(services=services, ray_constants=constants)
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(_private=private))
    monkeypatch.setitem(sys.modules, "ray._private", private)
    monkeypatch.setitem(sys.modules, "ray._private.services", services)
    monkeypatch.setitem(sys.modules, "ray._private.ray_constants", constants)
    return services, calls


def test_the_dashboards_command_gets_the_modules_option_once(services):
    svc, calls = services
    er._trim_dashboard("JobHead,NodeHead")
    assert svc.start_ray_process(["dashboard.py", "--x"], "dashboard", 1, k=2) == "proc"
    svc.start_ray_process(["dashboard.py", "--modules-to-load=Own"], "dashboard")
    svc.start_ray_process(["raylet"], "raylet")
    assert calls == [(["dashboard.py", "--x", "--modules-to-load=JobHead,NodeHead"], "dashboard", (1,), {"k": 2}),
                     (["dashboard.py", "--modules-to-load=Own"], "dashboard", (), {}),
                     (["raylet"], "raylet", (), {})]


def test_all_modules_leaves_the_dashboard_alone(services):
    svc, _ = services
    before = svc.start_ray_process
    er._trim_dashboard(None)
    assert svc.start_ray_process is before


class Node:
    def __init__(self, node_id: str, pid: int) -> None:
        self.node_id = node_id
        self.all_processes = {"raylet": [types.SimpleNamespace(process=types.SimpleNamespace(pid=pid))]}


class Cluster:
    made: list[Cluster] = []

    def __init__(self, initialize_head, head_node_args):
        self.initialize_head = initialize_head
        self.head_args, self.head_node, self.added, self.waited = head_node_args, Node("h", 10), [], False
        self.fail, self.address, self.shut = 0, "127.0.0.1:6379", False
        Cluster.made.append(self)

    def add_node(self, **kw):
        self.added.append(kw)
        if self.fail:
            self.fail -= 1
            raise Exception("node timed out")
        return Node(f"n{len(self.added)}", 20 + len(self.added))

    def wait_for_nodes(self):
        self.waited = True

    def shutdown(self):
        self.shut = True


@pytest.fixture
def ray_cluster(monkeypatch, services):
    ports = iter(range(5000, 5100))
    monkeypatch.setattr("rlcheck.process.wait.free_loopback_port", lambda: next(ports))
    monkeypatch.setitem(sys.modules, "ray.cluster_utils", types.SimpleNamespace(Cluster=Cluster))
    Cluster.made = []
    return Cluster.made


def test_the_head_and_each_extra_node_with_its_spec(env, ray_cluster, services, capsys):
    args = argparse.Namespace(num_cpus=3, dashboard_port=8265, extra_nodes=2, no_dashboard=False,
                              node_specs=json.dumps([{"num_gpus": 8, "env": {"A": "1"}}]))
    cluster, nodes = er._start(args)
    assert cluster is ray_cluster[0] and cluster.waited and [n.node_id for n in nodes] == ["h", "n1", "n2"]
    assert cluster.head_args == {"num_cpus": 3, "num_gpus": 0, "include_dashboard": True,
                                 "dashboard_host": "127.0.0.1", "dashboard_port": 8265,
                                 "node_ip_address": "127.0.0.1", "dashboard_agent_listen_port": 5000,
                                 "include_log_monitor": False, "no_monitor": True}
    assert cluster.added == [
        {"num_cpus": 3, "node_ip_address": "127.0.0.1", "num_gpus": 8, "resources": {"rlcheck_node_1": 1},
         "env_vars": {"A": "1"}, "include_log_monitor": False, "dashboard_agent_listen_port": 5001},
        {"num_cpus": 3, "node_ip_address": "127.0.0.1", "num_gpus": 0, "resources": {"rlcheck_node_2": 1},
         "env_vars": None, "include_log_monitor": False, "dashboard_agent_listen_port": 5002}]
    assert capsys.readouterr().out == ""
    assert cluster.initialize_head is True
    svc, calls = services
    svc.start_ray_process(["dashboard.py"], "dashboard")  # the dashboard was trimmed to the default modules
    assert calls[-1][0] == ["dashboard.py", "--modules-to-load=JobHead,NodeHead"]


def test_a_head_without_its_dashboard_gets_no_dashboard_port(env, ray_cluster, services):
    args = argparse.Namespace(num_cpus=2, dashboard_port=None, extra_nodes=0, no_dashboard=True, node_specs="[]")
    cluster, nodes = er._start(args)
    assert cluster.head_args == {"num_cpus": 2, "num_gpus": 0, "include_dashboard": False,
                                 "node_ip_address": "127.0.0.1", "dashboard_agent_listen_port": 5000,
                                 "include_log_monitor": False, "no_monitor": True}
    assert [n.node_id for n in nodes] == ["h"] and cluster.added == []


class Stoppable:
    """ray.cluster_utils.Cluster as _stop_cluster sees it: its nodes and what remove_node was asked."""

    def __init__(self, workers, head) -> None:
        self.worker_nodes, self.head_node, self.removed = list(workers), head, []

    def remove_node(self, node, allow_graceful=True):
        self.removed.append((node, allow_graceful))
        if node is self.head_node:
            self.head_node = None
        else:
            self.worker_nodes.remove(node)


@pytest.mark.parametrize(("workers", "head"), [(["w1", "w2"], "h"), ([], "h"), (["w1"], None)])
def test_the_cluster_is_killed_worker_nodes_first_without_the_graceful_drain(workers, head):
    cluster = Stoppable(workers, head)
    er._stop_cluster(cluster)
    assert cluster.removed == [(n, False) for n in [*workers, *([head] if head else [])]]
    assert cluster.worker_nodes == [] and cluster.head_node is None


def _proc(tmp_path, stats):
    """A stand-in /proc: one folder per entry, its stat file holding the text given (None: no stat file)."""
    for name, stat in stats.items():
        (tmp_path / name).mkdir()
        if stat is not None:
            (tmp_path / name / "stat").write_text(stat)
    return tmp_path


PROC = {"100": "100 (python) S 1 100 100 0", "101": "101 (ray::DashboardAgent) S 1 100 100 0",
        "102": "102 (a) b) S 7 100 100 0", "103": "103 (other) S 1 555 555 0", "104": None, "105": "105 (x) S 1",
        "self": "100 (python) S 1 100 100 0", "106": "106 (raylet) R 100 100 100 0",
        # the group is the third field after the name, not the session (the fourth): each told apart
        "107": "107 (short) S 1 100", "108": "108 (sess) S 1 555 100 0", "109": "109 (lead) S 1 100 555 0"}


def fake_os(monkeypatch, *, pid=100, group=100):
    killed: list = []

    def kill(target, sig):
        if target == 106:
            raise ProcessLookupError(target)
        if target == 102:
            raise PermissionError(target)
        killed.append((target, sig))

    monkeypatch.setattr(er, "os", types.SimpleNamespace(getpid=lambda: pid, getpgrp=lambda: group, kill=kill))
    return killed


def test_the_groups_members_are_read_from_proc_leaving_itself_out(monkeypatch, tmp_path):
    fake_os(monkeypatch)
    proc = _proc(tmp_path, PROC)
    assert sorted(er.group_members(proc=proc)) == [101, 102, 106, 107, 109]  # a name with ")" and spaces read past
    assert sorted(er.group_members(555, proc)) == [103, 108]
    assert sorted(er.group_members(100, proc)) == [101, 102, 106, 107, 109]  # itself left out either way


def test_a_group_leader_kills_what_is_left_of_its_group(monkeypatch, tmp_path):
    killed = fake_os(monkeypatch)
    assert sorted(er._kill_leftovers(_proc(tmp_path, PROC))) == [101, 107, 109]  # 102 not ours, 106 already gone
    assert sorted(killed) == [(101, er.signal.SIGKILL), (107, er.signal.SIGKILL), (109, er.signal.SIGKILL)]


def test_a_holder_that_leads_no_group_kills_nothing(monkeypatch, tmp_path):
    killed = fake_os(monkeypatch, pid=101, group=100)
    assert er._kill_leftovers(_proc(tmp_path, PROC)) == [] and killed == []


@pytest.mark.parametrize(("fails", "attempts", "raised"), [(0, 1, False), (2, 3, False), (3, 3, True)])
def test_a_node_that_did_not_start_is_tried_three_times(ray_cluster, capsys, fails, attempts, raised):
    cluster = Cluster(True, {})
    cluster.fail = fails
    if raised:
        with pytest.raises(Exception, match="^node timed out$"):
            er._add_node(cluster, {"num_cpus": 1})
    else:
        assert er._add_node(cluster, {"num_cpus": 1}).node_id == f"n{attempts}"
    assert [kw["dashboard_agent_listen_port"] for kw in cluster.added] == list(range(5000, 5000 + attempts))
    said = [f"extra node did not start (attempt {i} of 3): node timed out" for i in range(1, min(fails, 2) + 1)]
    assert capsys.readouterr().out.splitlines() == said


def test_no_attempt_is_unreachable(ray_cluster):
    with pytest.raises(AssertionError, match="^unreachable$"):
        er._add_node(Cluster(True, {}), {}, attempts=0)


def test_each_nodes_raylet_pid_head_first():
    assert er._node_processes([Node("h", 10), Node("w", 11)]) == {"node_ids": ["h", "w"],
                                                                  "raylet_pids": {"h": 10, "w": 11}}


def test_the_nodes_off_loopback_are_named(monkeypatch):
    seen = []
    nodes = [{"Alive": True, "NodeManagerAddress": "127.0.0.1"}, {"Alive": True, "NodeManagerAddress": "10.0.0.2"},
             {"Alive": False, "NodeManagerAddress": "10.0.0.3"}, {"Alive": True, "NodeManagerAddress": "127.0.1.1"},
             {"Alive": True, "NodeManagerAddress": "1.127.0.0"}]
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(
        init=lambda **kw: seen.append(("init", kw)), nodes=lambda: nodes, shutdown=lambda: seen.append("shutdown")))
    assert er._non_loopback("127.0.0.1:6379") == ["10.0.0.2", "1.127.0.0"]
    assert seen == [("init", {"address": "127.0.0.1:6379", "logging_level": er.logging.ERROR,
                              "log_to_driver": False}), "shutdown"]


class Out:
    """sys.stdout as print sees it: what was written and where it was flushed."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        self.parts.append("<flush>")


def test_a_retried_node_is_said_flushed(ray_cluster, monkeypatch):
    out = Out()
    monkeypatch.setattr(er.sys, "stdout", out)
    cluster = Cluster(True, {})
    cluster.fail = 1
    er._add_node(cluster, {})
    assert out.parts == ["extra node did not start (attempt 1 of 3): node timed out", "\n", "<flush>"]


def test_stdin_closing_stops_it(monkeypatch):
    monkeypatch.setattr(er.sys, "stdin", io.StringIO("anything"))
    stop = threading.Event()
    er._stop_on_eof(stop)
    assert stop.is_set()


def test_a_dead_parent_stops_it(monkeypatch):
    parents = iter([7, 7, 1])
    monkeypatch.setattr(er.os, "getppid", lambda: next(parents))
    stop = threading.Event()
    er._stop_when_orphaned(stop, 7, poll_s=0.001)
    assert stop.is_set() and list(parents) == []  # asked until the parent changed, not before


class Waits(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        return super().wait(0)


def test_the_parent_is_looked_at_every_half_second(monkeypatch):
    monkeypatch.setattr(er.os, "getppid", lambda: 1)
    stop = Waits()
    er._stop_when_orphaned(stop, 7)
    assert stop.is_set() and stop.waits == [0.5, 0.5]


def test_a_stop_already_asked_for_ends_the_watch(monkeypatch):
    monkeypatch.setattr(er.os, "getppid", lambda: 1)
    stop = threading.Event()
    stop.set()
    er._stop_when_orphaned(stop, 7)  # returns at once: set() is the only way out, and it is set
    assert stop.is_set()


class Bounded(threading.Event):
    """main's stop event: a wait that would hang fails instead."""

    def wait(self, timeout=None):
        assert super().wait(5 if timeout is None else timeout), "never stopped"
        return True


@pytest.fixture
def held(env, monkeypatch):
    """main with a stand-in cluster and recorded threads; SIGTERM arrives when the stdin watch is started."""
    state: dict = {"outside": [], "signals": {}, "threads": [], "asked": []}
    cluster = types.SimpleNamespace(address="127.0.0.1:6379")
    monkeypatch.setattr(er, "_stop_cluster", lambda c: state.setdefault("shutdown", c is cluster))
    # never the real one here: pytest may lead its own process group
    monkeypatch.setattr(er, "_kill_leftovers", lambda: state.setdefault("leftovers", "shutdown" in state))

    def start(args):
        state["args"], state["tmpdir"] = args, er.os.environ.get("RAY_TMPDIR")
        return cluster, [Node("h", 10), Node("w", 11)]

    class Thread:
        def __init__(self, target=None, args=(), daemon=None):
            state["threads"].append((target, args, daemon))
            self.target = target

        def start(self):
            if self.target is er._stop_on_eof:
                state["signals"][15](15, None)

    monkeypatch.setattr(er, "_start", start)
    monkeypatch.setattr(er, "_non_loopback", lambda address: state["asked"].append(address) or state["outside"])
    monkeypatch.setattr(er, "signal", types.SimpleNamespace(
        SIGTERM=15, signal=lambda s, f: state["signals"].__setitem__(s, f)))
    monkeypatch.setattr(er, "threading", types.SimpleNamespace(Thread=Thread, Event=Bounded))
    state["out"] = Out()
    # sys.stdout is set in the test itself: pytest's capture sets its own between the setup and the call
    state["capture"] = lambda: monkeypatch.setattr(er.sys, "stdout", state["out"])
    return state


def test_main_prints_ready_holds_until_sigterm_and_shuts_down(held):
    held["capture"]()
    assert er.main(["--dashboard-port", "8265", "--extra-nodes", "1", "--temp-dir", "/tmp/rlray-x"]) == 0
    ready = {"gcs_address": "127.0.0.1:6379", "dashboard_url": "http://127.0.0.1:8265", "nodes": 2,
             "node_ids": ["h", "w"], "raylet_pids": {"h": 10, "w": 11}}
    assert held["out"].parts == [f"RLCHECK_RAY_READY {json.dumps(ready)}", "\n", "<flush>"]
    assert held["shutdown"] and held["leftovers"] and list(held["signals"]) == [15] and held["tmpdir"] == "/tmp/rlray-x"
    assert held["asked"] == ["127.0.0.1:6379"]
    assert vars(held["args"]) == {"dashboard_port": 8265, "num_cpus": 2, "extra_nodes": 1, "temp_dir": "/tmp/rlray-x",
                                  "node_specs": "[]", "no_dashboard": False}
    assert er.os.environ["RAY_prestart_worker_first_driver"] == "0"
    (eof, eof_args, eof_daemon), (orphan, orphan_args, orphan_daemon) = held["threads"]
    stop = eof_args[0]
    assert (eof, eof_args, eof_daemon) == (er._stop_on_eof, (stop,), True) and isinstance(stop, Bounded)
    assert (orphan, orphan_args, orphan_daemon) == (er._stop_when_orphaned, (stop, er.os.getppid()), True)


def test_main_without_a_temp_dir_leaves_rays_own(held):
    held["capture"]()
    assert er.main(["--dashboard-port", "1", "--num-cpus", "4", "--node-specs", "[{}]"]) == 0
    assert held["tmpdir"] is None and vars(held["args"]) == {"dashboard_port": 1, "num_cpus": 4, "extra_nodes": 0,
                                                            "temp_dir": "", "node_specs": "[{}]",
                                                            "no_dashboard": False}
    assert json.loads(held["out"].parts[0].removeprefix("RLCHECK_RAY_READY "))["nodes"] == 1


def test_main_without_a_dashboard_says_its_url_is_empty(held):
    held["capture"]()
    assert er.main(["--no-dashboard", "--temp-dir", "/tmp/rlray-x"]) == 0
    ready = json.loads(held["out"].parts[0].removeprefix("RLCHECK_RAY_READY "))
    assert ready["dashboard_url"] == "" and ready["gcs_address"] == "127.0.0.1:6379"
    assert held["args"].no_dashboard is True and held["args"].dashboard_port is None and held["shutdown"]


def test_main_refuses_a_node_off_loopback_with_exit_3_and_shuts_down(held):
    held["capture"]()
    held["outside"] = ["10.0.0.2"]
    assert er.main(["--dashboard-port", "8265"]) == 3
    assert held["out"].parts == ["RLCHECK_RAY_ERROR nodes on non-loopback addresses: ['10.0.0.2']", "\n", "<flush>"]
    assert held["shutdown"] and held["leftovers"] and held["threads"] == []


def test_help_says_what_the_child_is_and_what_a_node_spec_is(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_:
        er.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert exit_.value.code == 0
    assert "Child process that holds an embedded Ray on loopback: `python -m rlcheck.cluster.embedded_ray`." in out
    assert "--node-specs NODE_SPECS JSON list of {num_gpus, env}, one per extra node" in out
    assert "--jobs-only" not in out
    assert "--no-dashboard no dashboard: no Jobs API, only the GCS" in out
    assert "--dashboard-port DASHBOARD_PORT the dashboard's port (needed unless --no-dashboard)" in out


@pytest.mark.parametrize("argv", [[], ["--num-cpus", "2"]])
def test_main_needs_the_dashboard_port_unless_there_is_no_dashboard(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        er.main(argv)
    assert exit_.value.code == 2
    assert "error: --dashboard-port is needed unless --no-dashboard is given" in capsys.readouterr().err
