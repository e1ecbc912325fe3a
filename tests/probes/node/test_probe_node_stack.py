"""The RL stack's versions per node (SGLang, megatron-core, SLIME / Miles, NCCL) and their uniformity across nodes."""

from __future__ import annotations

import pytest

from rlcheck.probes.cluster.node_versions import evaluate_versions_uniform
from rlcheck.probes.node import node_stack
from rlcheck.process import subproc
from rlcheck.verdict import Status
from tests.gpu_health_recordings import fanout, node, reading, renamed

STACK = {"sglang_version": "0.5.12.post1", "megatron_version": "0.17.0", "framework": "slime 0.2.4",
         "nccl_version": "2.29.3"}
"""The stack every healthy node runs in these cases (the reference image's SGLang and SLIME)."""


def _cluster(*odd: dict[str, str]):
    head = renamed(node(reading(), "head_gpuless.json", **STACK), "head", is_head=True)
    workers = [renamed(node(reading(), **{**STACK, **changes}), f"w{i}") for i, changes in
               enumerate(({}, {}, *odd), start=1)]
    return fanout(head, *workers)


@pytest.mark.parametrize(("changes", "fragment"), [
    ({"sglang_version": "0.5.9"}, "SGLang 0.5.9 (most nodes run 0.5.12.post1)"),
    ({"framework": "miles 0.1.0"}, "framework miles 0.1.0 (most nodes run slime 0.2.4)"),
    ({"framework": "slime (source checkout)"}, "framework slime (source checkout) (most nodes run slime 0.2.4)"),
    ({"nccl_version": "2.27.7"}, "NCCL 2.27.7 (most nodes run 2.29.3)"),
    ({"megatron_version": "0.16.0"}, "megatron-core 0.16.0 (most nodes run 0.17.0)"),
])
def test_probe_node_stack_odd_node_fails_naming_both_versions(changes, fragment):
    verdicts = evaluate_versions_uniform(_cluster(changes))
    assert [v.status for v in verdicts] == [Status.PASS, Status.PASS, Status.PASS, Status.FAIL]
    assert verdicts[-1].node == "w3" and "w3" in verdicts[-1].summary and fragment in verdicts[-1].summary


def test_probe_node_stack_same_everywhere_passes_and_unread_is_said_not_compared():
    verdicts = evaluate_versions_uniform(_cluster({"sglang_version": ""}))
    assert all(v.status is Status.PASS for v in verdicts), [v.summary for v in verdicts]
    assert "SGLang 0.5.12.post1" in verdicts[0].summary and "framework slime 0.2.4" in verdicts[0].summary
    assert "not read here: " in verdicts[-1].details and "SGLang" in verdicts[-1].details


def test_probe_node_stack_framework_and_nccl_readers(tmp_path):
    versions = {"miles": "0.1.0", "nvidia-nccl-cu12": "2.27.7"}
    assert node_stack.read_framework(lambda n: n == "miles", lambda n: versions.get(n, "")) == "miles 0.1.0"
    assert node_stack.read_framework(lambda n: n == "slime", lambda n: "") == "slime (source checkout)"
    assert node_stack.read_framework(lambda n: False, lambda n: "") == ""
    assert node_stack.read_nccl(lambda n: versions.get(n, ""), ()) == "2.27.7"
    header = tmp_path / "nccl.h"
    header.write_text("#define NCCL_MAJOR 2\n#define NCCL_MINOR 29\n#define NCCL_PATCH 3\n#define NCCL_SUFFIX \"\"\n")
    partial = tmp_path / "partial.h"
    partial.write_text("#define NCCL_MAJOR 2\n")
    assert node_stack.read_nccl(lambda n: "", (tmp_path / "absent.h", partial, header)) == "2.29.3"
    assert node_stack.read_nccl(lambda n: "", (partial,)) == ""


def test_probe_node_stack_reads_this_environment_without_importing_it():
    code = ("import sys; from rlcheck.probes.node.node_stack import read_stack; s = read_stack(); "
            "print(s.sglang, s.megatron, s.nccl, sorted(m for m in ('sglang', 'megatron', 'torch') "
            "if m in sys.modules))")
    done = subproc.python(code, timeout_s=60)
    sglang, megatron, nccl, loaded = done.stdout.strip().split(" ", 3)
    assert done.returncode == 0 and loaded == "[]", done.tail()
    assert sglang.startswith("0.5.") and megatron.count(".") >= 1 and nccl.startswith("2.")
