"""One rank of the pairwise all-reduce (rlcheck.probes.node.pair_member) as a rule table: nccl-tests' bus bandwidth
for pairs and larger rounds, the rendezvous port, and the rank's every step recorded through a test-only stand-in
for torch (the process group's arguments, the device and dtype per backend, the warm-up and barrier before the clock,
one hook call and all-reduce per iteration, the group destroyed also when a collective fails, the answer). The real
gloo rank runs in tests/probes/cluster/test_probe_nccl_pairs.py."""

from __future__ import annotations

import datetime
import socket
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from rlcheck.probes.node import pair_member
from rlcheck.probes.node.pair_member import all_reduce_member, bus_bandwidth_gbps, pick_port


@pytest.mark.parametrize(("size", "seconds", "world", "gbps"), [
    (10**9, 1.0, 2, 1.0),  # a pair: 2(n-1)/n = 1
    (10**9, 1.0, 4, 1.5), (10**9, 1.0, 8, 1.75),
    (10**9, 0.5, 2, 2.0), (4 * 10**9, 2.0, 2, 2.0), (10**9, 1.0, 1, 0.0),
    (256 * 2**20, 0.01, 2, 26.8435456),
])
def test_rules_table_pair_member_bus_bandwidth(size, seconds, world, gbps):
    assert bus_bandwidth_gbps(size, seconds, world) == pytest.approx(gbps, rel=1e-12)


def test_rules_table_pair_member_port_is_free_on_the_address():
    port = pick_port("127.0.0.1")
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert low <= port <= high  # the kernel's choice of a free port, not a fixed one
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))  # closed again: the rendezvous can take it
        sock.listen()
        assert pick_port("127.0.0.1") != port  # while it is taken, another


def test_rules_table_pair_member_port_on_a_foreign_address_is_refused():
    with pytest.raises(OSError):
        pick_port("192.0.2.1")  # TEST-NET-1: no interface of this machine holds it


class Tensor:
    def __init__(self, count: int, dtype: str, device: Any) -> None:
        self.count, self.dtype, self.device = count, dtype, device

    def numel(self) -> int:
        return self.count

    def element_size(self) -> int:
        return {"bfloat16": 2, "float32": 4}[self.dtype]


class Torch:
    """What all_reduce_member uses of torch, recording each call in order; the clock reads 100.0 then 100.0 + span."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.fail_at = fail_at
        self.bfloat16, self.float32 = "bfloat16", "float32"
        self.cuda = types.SimpleNamespace(synchronize=lambda: self.log.append(("synchronize",)))
        self.distributed = types.SimpleNamespace(
            init_process_group=lambda **kw: self.log.append(("init", kw)),
            all_reduce=self._all_reduce, barrier=lambda: self.log.append(("barrier",)),
            destroy_process_group=lambda: self.log.append(("destroy",)))

    def device(self, kind: str, index: int | None = None) -> types.SimpleNamespace:
        return types.SimpleNamespace(type=kind, index=index)

    def finfo(self, dtype: str) -> types.SimpleNamespace:
        return types.SimpleNamespace(bits={"bfloat16": 16, "float32": 32}[dtype])

    def ones(self, count: int, *, dtype: str, device: Any) -> Tensor:
        self.log.append(("ones", count, dtype, device.type, device.index))
        return Tensor(count, dtype, device)

    def _all_reduce(self, tensor: Tensor) -> None:
        assert isinstance(tensor, Tensor)  # the rank's own tensor
        self.log.append(("all_reduce",))
        if self.fail_at is not None and sum(e[0] == "all_reduce" for e in self.log) == self.fail_at:
            raise RuntimeError("peer hung up")


@pytest.fixture
def torch(monkeypatch):
    def install(fail_at: int | None = None, span: float = 2.0) -> Torch:
        fake = Torch(fail_at)
        monkeypatch.setitem(sys.modules, "torch", fake)
        monkeypatch.setitem(sys.modules, "torch.distributed", fake.distributed)
        ticks = iter([100.0, 100.0 + span])

        def clock() -> float:
            fake.log.append(("clock",))
            return next(ticks)
        monkeypatch.setattr(pair_member, "time", types.SimpleNamespace(perf_counter=clock))
        return fake
    return install


RANK = dict(rank=1, world_size=2, master_addr="10.0.0.7", master_port=29555, timeout_s=45.0)


@pytest.mark.parametrize(("backend", "size", "ones", "synced"), [
    ("nccl", 1_000_000, (500_000, "bfloat16", "cuda", 0), True),
    ("gloo", 1_000_000, (250_000, "float32", "cpu", None), False),
    ("gloo", 1_000_031, (250_000, "float32", "cpu", None), False),  # whole 32-byte groups only
])
def test_rules_table_pair_member_rank_steps_and_answer(torch, backend, size, ones, synced):
    fake = torch(span=2.0)
    hooked: list[int] = []
    got = all_reduce_member(**RANK, backend=backend, size_bytes=size, iterations=4,
                            between_iterations=lambda: hooked.append(len(fake.log)))
    sync = [("synchronize",)] if synced else []
    step = [("all_reduce",)]
    assert fake.log == [
        ("init", dict(backend=backend, init_method="tcp://10.0.0.7:29555", rank=1, world_size=2,
                      timeout=datetime.timedelta(seconds=45.0))),
        ("ones", *ones), ("all_reduce",), *sync, ("barrier",), ("clock",),
        *step * 4, *sync, ("clock",), ("destroy",)]
    first = fake.log.index(("clock",)) + 1
    assert hooked == [first, first + 1, first + 2, first + 3]  # before each timed all-reduce
    bytes_ = ones[0] * (2 if backend == "nccl" else 4)
    assert got == {"rank": 1, "seconds": 2.0, "size_bytes": bytes_,
                   "busbw_gbps": pytest.approx(bytes_ / 0.5 / 1e9)}


def test_rules_table_pair_member_rank_without_hook_and_a_larger_round(torch):
    fake = torch(span=1.0)
    got = all_reduce_member(rank=0, world_size=4, master_addr="h", master_port=1, backend="gloo", size_bytes=4096,
                            iterations=2, timeout_s=1)
    assert [e[0] for e in fake.log].count("all_reduce") == 3
    assert got == {"rank": 0, "seconds": 1.0, "size_bytes": 4096,
                   "busbw_gbps": pytest.approx(4096 / 0.5 * 1.5 / 1e9)}


@pytest.mark.parametrize("fail_at", [1, 3])  # the warm-up, a timed all-reduce
def test_rules_table_pair_member_failed_collective_still_leaves_the_group(torch, fail_at):
    fake = torch(fail_at=fail_at)
    with pytest.raises(RuntimeError, match="^peer hung up$"):
        all_reduce_member(**RANK, backend="gloo", size_bytes=4096, iterations=3)
    assert fake.log[-1] == ("destroy",) and fake.log[-2] == ("all_reduce",)
