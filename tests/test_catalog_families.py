"""Failure families (issue 27): every family the field reports has entries that record where upstream raises their
message; a failure line no entry knows is named `uncatalogued`, only where nothing else names it; the field corpus
covers every family with real lines, and no healthy line is named."""

from __future__ import annotations

from collections import Counter

import pytest

from rlcheck import catalog, field_corpus
from rlcheck.scan import Matcher

ENTRIES = catalog.load_catalog()
MATCHER = Matcher(ENTRIES)
NEW_FAMILY_ENTRIES = [
    "nccl-collective-timeout", "nccl-unhandled-cuda-error", "nccl-system-error", "nccl-ib-transport-error",
    "c10d-store-unreachable", "deepep-nvshmem-init", "extension-abi-mismatch", "driver-too-old",
    "ptxas-arch-unsupported", "tilelang-compile-error", "torch-load-weights-only", "ray-node-died", "host-oom-killed",
    "sglang-scheduler-crashed", "sglang-kv-pool-no-memory", "sglang-tp-memory-imbalance", "bridge-unsupported-param",
    "reward-server-unreachable",
]


@pytest.mark.parametrize("fid", NEW_FAMILY_ENTRIES)
def test_family_entry_names_its_family_and_source(fid):
    entry = ENTRIES[fid]
    assert entry.family and entry.family_name == entry.family
    assert entry.raise_sites or "#" in " ".join(entry.upstream), fid  # a raise site, or the issue it came from


def test_every_family_of_the_field_is_in_the_corpus():
    families = Counter(ENTRIES[x.expected].family_name for x in field_corpus.load() if x.expected)
    for family in ("nccl", "abi", "ray", "sglang", "oom", "transport", "compiler", "cuda", "uncatalogued"):
        assert families[family] >= 2, (family, families)
    assert families["nccl"] >= 30 and families["abi"] >= 10 and families["ray"] >= 10


@pytest.mark.parametrize(("line", "expected"), [
    # a Python error with no entry: named, as uncatalogued (sgl-project/sglang#165)
    ("AttributeError: 'NoneType' object has no attribute 'cpu'", ["uncatalogued"]),
    # a catalogued line that also has the shape of a traceback's last line: only its entry
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", ["cuda-oom"]),
    ("RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", ["nccl-system-error"]),
    # Ray's wrappers resolve to the cause they wrap
    ("ray.exceptions.RayTaskError(OutOfMemoryError): ray::MegatronTrainRayActor.train() (pid=1, ip=h)", ["cuda-oom"]),
    ("ray.exceptions.RayTaskError(ActorDiedError): ray::RolloutManager.generate() (pid=1, ip=h)", ["ray-actor-died"]),
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", ["host-oom-killed"]),
    # native deaths
    ("terminate called after throwing an instance of 'c10::Error'", ["uncatalogued"]),
    ("Segmentation fault (core dumped)", ["uncatalogued"]),
    ("Fatal Python error: Aborted", ["uncatalogued"]),
])
def test_fallback_names_only_what_no_entry_names(line, expected):
    assert MATCHER.match_line(line) == expected


@pytest.mark.parametrize("line", [
    "Error: Cannot connect to host 10.0.0.3:30000 ssl:default [Connection refused], retrying... (attempt 1/60)",
    "Traceback (most recent call last):",
    "UserWarning: The given NumPy array is not writable",
    "'eval/error_rate': 0.0, 'perf/step_time': 12.3",
    "[2026-12-01 09:25:16 TP0] Decode batch. #running-req: 64, #token: 51234, token usage: 0.09, "
    "gen throughput (token/s): 4021.12",
    "[2026-12-01 09:25:16 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, "
    "#new_token_ratio: 0.4000 -> 0.6000",
    "[rank0]:[I1201 09:25:16.123456789 ProcessGroupNCCL.cpp:952] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL "
    "initialization options: size: 8, global rank: 0, TIMEOUT(ms): 600000",
    "NCCL_TIMEOUT=1800 'distributed_timeout_minutes': 30",
])
def test_healthy_lines_are_not_uncatalogued(line):
    assert "uncatalogued" not in MATCHER.match_line(line)


def test_roles_mark_consequences_and_routine_lines():
    consequences = {f for f, e in ENTRIES.items() if e.role == "consequence"}
    assert {"ray-actor-died", "sglang-scheduler-crashed", "rollout-engines-unreachable"} <= consequences
    assert ENTRIES["kv-pool-truncation"].role == "invariant"
    assert [f for f, e in ENTRIES.items() if e.role == "fallback"] == [catalog.FALLBACK_ID]
