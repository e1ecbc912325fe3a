"""Runs started ahead of the tests that read them: together, only those named, each result (or error) to its taker."""

from __future__ import annotations

import json
import os
import threading
import time
import types
from pathlib import Path

import pytest

from rlcheck.repro import ahead as ahead_module
from rlcheck.repro.ahead import CPU_SLOTS, SLOT_WAIT_S, TAKE_S, Ahead, Slots, begin, begin_one, cores, once


def test_ahead_runs_the_named_calls_together():
    """Each started call waits for the other: run one after another, the barrier would break."""
    barrier = threading.Barrier(2, timeout=10)

    def meet(key: str) -> str:
        barrier.wait()
        return f"{key} ran"

    ahead = Ahead({"a": lambda: meet("a"), "b": lambda: meet("b")}).start(["a", "b"])
    assert (ahead.take("b"), ahead.take("a")) == ("b ran", "a ran")


def test_ahead_starts_only_the_named_and_the_rest_when_taken():
    calls: list[str] = []
    threads: dict[str, str] = {}

    def run(key: str) -> str:
        calls.append(key)
        threads[key] = threading.current_thread().name
        return key

    ahead = Ahead({k: (lambda k=k: run(k)) for k in ("a", "b", "c")}).start(["b", "b", "not a call"])
    assert ahead.take("b") == "b"
    assert calls == ["b"]  # a and c not started: their tests are not in this session
    first = ahead.futures["b"]
    assert ahead.start(["b"]).futures["b"] is first  # begun once
    assert ahead.take("c") == "c"
    assert calls == ["b", "c"]
    assert list(ahead.futures) == ["b", "c"]
    assert threads["b"].startswith("rlcheck-ahead") and threads["c"].startswith("rlcheck-ahead")


def test_ahead_nothing_named_starts_nothing():
    ahead: Ahead[int] = Ahead({"a": lambda: 1}).start([])
    assert ahead.futures == {}
    assert ahead.take("a") == 1


def test_ahead_error_raised_to_the_taker():
    def broken() -> int:
        raise RuntimeError("child could not start")

    ahead = Ahead({"a": broken, "b": lambda: 2}).start(["a", "b"])
    assert ahead.take("b") == 2
    with pytest.raises(RuntimeError, match="child could not start"):
        ahead.take("a")
    with pytest.raises(KeyError):
        ahead.take("unknown")


class Peak:
    """How many calls run at once, at most."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self.lock = threading.Lock()

    def call(self, hold_s: float = 0.05) -> str:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(hold_s)
        with self.lock:
            self.now -= 1
        return "done"


def test_heavy_calls_started_ahead_share_the_slots_at_most_that_many_at_once():
    peak, slots = Peak(), Slots(2)
    ahead = Ahead({str(i): peak.call for i in range(6)}, heavy=True, slots=slots).start(str(i) for i in range(6))
    assert [ahead.take(str(i)) for i in range(6)] == ["done"] * 6
    assert peak.most == 2


def test_calls_not_heavy_take_no_slot():
    peak, slots = Peak(), Slots(1)
    ahead = Ahead({str(i): peak.call for i in range(4)}, slots=slots).start(str(i) for i in range(4))
    assert [ahead.take(str(i)) for i in range(4)] == ["done"] * 4
    assert peak.most == 4


def test_urgent_calls_and_a_take_not_started_take_no_slot():
    slots, release = Slots(1), threading.Event()
    ahead = Ahead({"holder": lambda: release.wait(10), "urgent": lambda: "urgent ran", "taken": lambda: "taken ran",
                   "queued": lambda: "queued ran"}, heavy=True, slots=slots).start(["holder"])
    time.sleep(0.05)  # the holder has the one slot
    assert ahead.start(["urgent"], urgent=True).take("urgent") == "urgent ran"
    assert ahead.take("taken") == "taken ran"
    ahead.start(["queued"])  # begun ahead: waits for the slot
    time.sleep(0.1)
    assert not ahead.futures["queued"].done()
    release.set()
    assert ahead.take("queued") == "queued ran" and ahead.take("holder") is True


def test_slots_a_holder_waits_at_most_wait_s_then_runs_without_one():
    slots = Slots(1, wait_s=0.2)
    with slots.hold() as first:
        started = time.monotonic()
        with slots.hold() as second:
            waited = time.monotonic() - started
    assert first is True and second is False and waited >= 0.2
    with slots.hold() as again:  # the slot came back: the one without a slot released nothing
        assert again is True


def test_slots_release_on_error_and_refuse_fewer_than_one():
    slots = Slots(1, wait_s=0.2)
    with pytest.raises(RuntimeError), slots.hold():
        raise RuntimeError("a run that broke")
    with slots.hold() as got:
        assert got is True
    with pytest.raises(ValueError, match="slots must be 1 or more"):
        Slots(0)


def test_cpu_slots_one_per_core_this_process_may_use():
    assert cores() == len(os.sched_getaffinity(0)) >= 1
    assert CPU_SLOTS.count == cores() and CPU_SLOTS.wait_s == SLOT_WAIT_S > 0


@pytest.mark.parametrize(("affinity", "cpu_count", "want"), [
    ({0}, 8, 1), ({0, 1, 2}, 8, 3),  # the affinity (a container's cpuset), not the machine's count
    (AttributeError, 4, 4), (OSError, 3, 3), (AttributeError, None, 1), (OSError, 1, 1),
])
def test_cores_is_the_affinity_else_the_cpu_count_at_least_one(monkeypatch, affinity, cpu_count, want):
    def sched_getaffinity(pid: int) -> set[int]:
        assert pid == 0
        if isinstance(affinity, type):
            raise affinity("no affinity here")
        return affinity

    monkeypatch.setattr(ahead_module.os, "sched_getaffinity", sched_getaffinity)
    monkeypatch.setattr(ahead_module.os, "cpu_count", lambda: cpu_count)
    assert cores() == want


@pytest.mark.parametrize(("load", "cores_", "idle"), [
    (0.0, 2, True), (3.99, 2, True), (4.0, 2, False), (15.0, 2, False), (31.9, 16, True), (32.0, 16, False),
    (OSError, 2, False), (AttributeError, 2, False),  # no load to read: a loaded machine is the safe guess
])
def test_cores_idle_is_the_load_below_two_per_core(monkeypatch, load, cores_, idle):
    def getloadavg() -> tuple[float, float, float]:
        if isinstance(load, type):
            raise load("no load average here")
        return (load, 99.0, 99.0)  # the 1-minute average is the one read

    monkeypatch.setattr(ahead_module.os, "getloadavg", getloadavg)
    monkeypatch.setattr(ahead_module, "cores", lambda: cores_)
    assert ahead_module.cores_idle() is idle


def test_ahead_each_call_begun_once_when_threads_start_it_together():
    calls: list[str] = []
    gate = threading.Barrier(8, timeout=10)
    ahead = Ahead({"a": lambda: calls.append("a") or len(calls)})

    def start() -> None:
        gate.wait()
        ahead.start(["a"])

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert ahead.take("a") == 1 and calls == ["a"]


def test_once_makes_one_object_per_key_however_many_ask_together():
    session = types.SimpleNamespace(stash=pytest.Stash())
    key, other = pytest.StashKey[object](), pytest.StashKey[object]()
    made: list[object] = []
    gate = threading.Barrier(6, timeout=10)

    def make() -> object:
        made.append(thing := object())
        time.sleep(0.05)  # a slow maker: the others arrive while it works
        return thing

    got: list[object] = []

    def ask() -> None:
        gate.wait()
        got.append(once(session, key, make))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(made) == 1 and got == [made[0]] * 6
    assert once(session, other, lambda: "second key") == "second key"  # another key: its own object
    assert once(session, key, lambda: "not made") is made[0]


def test_once_a_maker_may_ask_for_another_key():
    session = types.SimpleNamespace(stash=pytest.Stash())
    inner, outer = pytest.StashKey[str](), pytest.StashKey[str]()
    assert once(session, outer, lambda: once(session, inner, lambda: "in") + " out") == "in out"


RUNNING_CONFTEST = '''
import json
import pytest
from rlcheck.repro.ahead import running, running_here

pytest_plugins = ["rlcheck.plugin"]


class StandIn(pytest.Item):  # like a kept verdict's stand-in: collected, but no Function
    def runtest(self):
        pass


def pytest_collection_modifyitems(session, config, items):
    items.append(StandIn.from_parent(session, name="stand_in"))


def pytest_collection_finish(session):
    here = str(session.config.rootpath / "reproducers" / "test_repro_a.py")
    (session.config.rootpath / "seen.json").write_text(json.dumps(
        {"running": [item.name for item in running(session)], "here": running_here(session, here)}))
'''
RUNNING_MODULE_A = '''
import pytest

def test_one():
    pass

@pytest.mark.slow
def test_two():
    pass
'''


@pytest.mark.parametrize(("args", "running_names", "here"), [
    ((), ["test_one", "test_two", "test_three"], ["test_one", "test_two"]),
    (("--quick",), ["test_one", "test_three"], ["test_one"]),  # --quick skips the slow one: it runs nothing
    (("-k", "not one"), ["test_two", "test_three"], ["test_two"]),  # deselected
    (("-k", "three"), ["test_three"], []),
], ids=["all", "quick", "deselected", "other-module-only"])
def test_running_is_what_the_session_runs_and_running_here_one_modules_share(pytester, args, running_names, here):
    pytester.makeconftest(RUNNING_CONFTEST)
    pytester.mkdir("reproducers")
    pytester.makepyfile(**{"reproducers/test_repro_a": RUNNING_MODULE_A,
                           "reproducers/test_repro_b": "def test_three():\n    pass\n"})
    pytester.runpytest("--hardware=none", "-p", "no:cacheprovider", "--collect-only", *args)
    seen = json.loads((pytester.path / "seen.json").read_text())
    assert seen == {"running": running_names, "here": here}


def fake_session() -> types.SimpleNamespace:
    made: list[str] = []

    class Factory:
        def mktemp(self, name: str) -> str:
            made.append(name)
            return f"/tmp/{name}0"

    return types.SimpleNamespace(stash=pytest.Stash(), config=types.SimpleNamespace(_tmp_path_factory=Factory()),
                                 made=made)


def running_of(session: object, module_file: str, names: list[str]):
    """A running_here that answers only for this session and module."""
    def answer(asked_session: object, asked_file: str) -> list[str]:
        assert (asked_session, asked_file) == (session, module_file)
        return names

    return answer


def test_begin_starts_the_calls_the_running_tests_read_once(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    session, key, makes = fake_session(), pytest.StashKey[Ahead[str]](), []
    monkeypatch.setattr(ahead_module, "running_here", running_of(session, "test_mod.py", ["test_a", "test_c"]))

    def make() -> Ahead[str]:
        makes.append(1)
        return Ahead({k: (lambda k=k: k) for k in ("x", "y", "z", "test_a")})

    reads = {"test_a": ["x", "y"], "test_b": ["z"]}  # test_c reads nothing; test_b does not run
    runs = begin(session, "test_mod.py", key, make, reads=reads)
    assert sorted(runs.futures) == ["x", "y"] and session.stash[key] is runs
    assert begin(session, "test_mod.py", key, make, reads=reads) is runs and makes == [1]
    by_name = begin(session, "test_mod.py", pytest.StashKey[Ahead[str]](), make)  # default: the call named as the test
    assert sorted(by_name.futures) == ["test_a"]


def test_begin_under_xdist_makes_but_starts_nothing(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setattr(ahead_module, "running_here", lambda session, module_file: ["test_a"])
    runs = begin(fake_session(), "test_mod.py", pytest.StashKey[Ahead[str]](), lambda: Ahead({"test_a": lambda: "a"}))
    assert runs.futures == {} and runs.take("test_a") == "a"


def test_begin_one_runs_the_module_test_in_a_fresh_folder(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    session, module = fake_session(), "/x/reproducers/test_repro_thing.py"
    monkeypatch.setattr(ahead_module, "_KEYS", {})  # the process's keys: none made for these modules yet
    monkeypatch.setattr(ahead_module, "running_here", running_of(session, module, ["test_repro_thing"]))
    runs = begin_one(session, module, lambda folder: f"ran in {folder}", heavy=True)
    assert runs.heavy is True and list(runs.calls) == ["test_repro_thing"]
    assert list(runs.futures) == ["test_repro_thing"]  # begun: its test runs in this session
    assert runs.take("test_repro_thing") == "ran in /tmp/thing0" and session.made == ["thing"]
    assert begin_one(session, module, lambda folder: "made again") is runs  # one per module and session
    other = "/x/reproducers/test_repro_other.py"
    monkeypatch.setattr(ahead_module, "running_here", running_of(session, other, []))
    light = begin_one(session, other, lambda folder: "light")
    assert light is not runs and light.heavy is False and light.futures == {}  # heavy only when asked
    monkeypatch.setattr(ahead_module, "running_here", lambda session, module_file: [])
    assert begin_one(fake_session(), module, lambda folder: "another session") is not runs


class FakeFunction(pytest.Function):
    """A collected test (tests only): its name, file and whether it is marked slow."""

    def get_closest_marker(self, name, default=None):
        return self.markers.get(name, default)


def fake_function(name: str, path: str, *, slow: bool = False) -> FakeFunction:
    item = object.__new__(FakeFunction)  # no collection: only what running() reads
    for attr, value in {"name": name, "path": Path(path), "markers": {"slow": "slow marker"} if slow else {}}.items():
        object.__setattr__(item, attr, value)
    return item


class NotAFunction:
    name, path = "stand_in", Path("/r/test_repro_a.py")


def options(**given: object):
    """A config's getoption: the options given, else the default asked for (ValueError without one, as pytest)."""
    def getoption(name: str, default: object = ValueError) -> object:
        if name in given:
            return given[name]
        if default is ValueError:
            raise ValueError(f"no option named {name!r}")
        return default

    return getoption


@pytest.mark.parametrize(("given", "want"), [
    ({}, ["one", "two", "three"]),  # no --quick option in this run (no rlcheck plugin): every test
    ({"quick": False}, ["one", "two", "three"]), ({"quick": True}, ["one", "three"]),
])
def test_running_counts_functions_less_the_slow_ones_under_quick(given, want):
    items = [fake_function("one", "/r/test_repro_a.py"), fake_function("two", "/r/test_repro_a.py", slow=True),
             NotAFunction(), fake_function("three", "/r/test_repro_b.py")]
    session = types.SimpleNamespace(items=items, config=types.SimpleNamespace(getoption=options(**given)))
    assert [item.name for item in ahead_module.running(session)] == want
    here = [name for name in want if name != "three"]
    assert ahead_module.running_here(session, "/r/test_repro_a.py") == here
    assert ahead_module.running_here(session, "/r/other.py") == []


def test_take_waits_at_most_its_bound_and_names_the_run():
    release = threading.Event()
    runs = Ahead({"hung": lambda: release.wait(10)}).start(["hung"])
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"^the run 'hung' did not end within 0\.2 s$"):
        runs.take("hung", timeout_s=0.2)
    assert time.monotonic() - started >= 0.2
    release.set()
    assert runs.take("hung") is True  # the same run, once it ended
    assert TAKE_S >= SLOT_WAIT_S + 600  # longer than a slot's wait and a child's own bounds: only a hang meets it

