"""Per-node probe: recorded node observations that PASS, FAIL, WARN, SKIP and stay UNKNOWN; the collector's readers."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from rlcheck import hardware, recipes
from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.probes.cluster import node_evaluate as judge
from rlcheck.probes.cluster.cluster_gpus import collect_cluster_gpus, evaluate_cluster_gpus, gpus_needed
from rlcheck.probes.cluster.cluster_reach import evaluate_node_answer, evaluate_reachable, judge_nodes
from rlcheck.probes.node import collect as node
from rlcheck.probes.node import gpus, tms
from rlcheck.process import subproc
from rlcheck.verdict import Status
from tests.bad_recipes import BAD_VARIANTS

RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "observations" / "node"
H200 = hardware.get_profile("h200")
GPUS, DRIVER, TMS = judge.evaluate_node_gpus, judge.evaluate_node_driver, judge.evaluate_node_tms
SHM, EFA, HEAD = judge.evaluate_node_shm, judge.evaluate_node_efa, judge.evaluate_head_gpuless
TABLE = [
    ("h200_node_healthy.json", GPUS, H200, Status.PASS, "8 x NVIDIA H200 (sm_90), as h200 expects"),
    ("h200_node_healthy.json", DRIVER, H200, Status.PASS, "driver 580.65.06 runs torch 2.11.0+cu130 (CUDA 13.0)"),
    ("h200_node_healthy.json", TMS, H200, Status.PASS, "resolves to /usr/local/cuda/lib64/libcudart.so.13"),
    ("h200_node_healthy.json", SHM, H200, Status.PASS, "/dev/shm is 100.00 GiB (>= 10 GiB, h200)"),
    ("h200_node_healthy.json", EFA, H200, Status.PASS, "16 EFA device(s); h200 has 16"),
    ("h200_node_healthy.json", GPUS, None, Status.SKIP, "needs a hardware profile (--hardware)"),
    ("h200_node_healthy.json", SHM, None, Status.SKIP, "needs a hardware profile with a /dev/shm floor"),
    ("h200_node_7_gpus.json", GPUS, H200, Status.FAIL, "7 GPUs; expected 8 (h200)"),
    ("h100_node_in_h200_cluster.json", GPUS, H200, Status.FAIL, "NVIDIA H100 80GB HBM3 is not NVIDIA H200"),
    ("ray_advertises_4_of_8_gpus.json", GPUS, H200, Status.FAIL, "Ray advertises 4 GPUs; the node has 8"),
    ("nvidia_smi_hung.json", GPUS, H200, Status.UNKNOWN, "could not read GPUs: nvidia-smi did not answer within 20 s"),
    ("nvidia_smi_hung.json", TMS, H200, Status.UNKNOWN, "could not read GPUs"),
    ("cpu_worker.json", GPUS, H200, Status.SKIP, "CPU-only node"),
    ("cpu_worker.json", EFA, H200, Status.SKIP, "CPU-only node"),
    ("cpu_worker.json", DRIVER, H200, Status.SKIP, "no GPU here"),
    ("driver_550_on_cuda13.json", DRIVER, H200, Status.FAIL, "driver 550.54.15 runs CUDA up to 12.x"),
    ("tms_cu12_on_cuda13.json", TMS, H200, Status.FAIL,
     "preloads torch_memory_saver_hook_mode_preload.abi3.so (NEEDED libcudart.so.12) on a CUDA 13.0 runtime"),
    ("tms_cu13_loader_unresolved.json", TMS, H200, Status.FAIL, "the loader finds no libcudart.so.13"),
    # One CUDA 12 image with the 0.0.10 wheel under each SLIME rule: only main's cu13-first pick breaks it.
    ("tms_main_cu13_on_cuda12.json", TMS, H200, Status.FAIL,
     "SLIME (slime-main) preloads torch_memory_saver_hook_mode_preload_cu13.abi3.so (NEEDED libcudart.so.13) on a "
     "CUDA 12.8 runtime"),
    ("tms_v031_cu12_on_cuda12.json", TMS, H200, Status.PASS, "_cu12.abi3.so (NEEDED libcudart.so.12) resolves"),
    ("tms_v024_on_cuda12.json", TMS, H200, Status.PASS, "preload.abi3.so (NEEDED libcudart.so.12) resolves"),
    ("shm_64mib.json", SHM, H200, Status.FAIL, "/dev/shm is 0.06 GiB; expected >= 10 GiB (h200)"),
    ("efa_8_of_16.json", EFA, H200, Status.FAIL, "8 EFA device(s); h200 has 16"),
    ("head_has_gpus.json", HEAD, H200, Status.FAIL, "advertises 8 GPUs to Ray; expected 0"),
    ("head_gpuless.json", HEAD, H200, Status.PASS, "0 GPUs advertised to Ray, none seen"),
    ("head_sees_gpus_advertises_none.json", HEAD, H200, Status.WARN, "sees 8 x NVIDIA H200 (sm_90) but advertises 0"),
]
FAILURE_IDS = {"tms_cu12_on_cuda13.json": "tms-cu12-preload",
               "tms_cu13_loader_unresolved.json": "tms-loader-unresolved",
               "tms_main_cu13_on_cuda12.json": "tms-cu12-preload"}


def load(recording: str) -> tuple[NodeFacts, node.NodeObservation]:
    data = json.loads((RECORDINGS / recording).read_text())
    return NodeFacts(**data["node"]), node.NodeObservation.from_dict(data["observation"])


@pytest.mark.parametrize(("recording", "evaluate", "profile", "status", "fragment"), TABLE,
                         ids=[f"{t[0].removesuffix('.json')}-{t[1].__name__.removeprefix('evaluate_')}" for t in TABLE])
def test_probe_node_recorded(recording, evaluate, profile, status, fragment):
    facts, obs = load(recording)
    verdict = evaluate(facts, obs, profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.node == facts.hostname  # a user knows a node by its host name
    if status is Status.FAIL and evaluate is TMS:
        assert verdict.failure_id == FAILURE_IDS[recording] and verdict.remedy


def test_probe_node_every_recording_is_used():
    assert {t[0] for t in TABLE} == {p.name for p in RECORDINGS.glob("*.json")}


def test_probe_node_observation_without_a_defaulted_fact_loads_and_unknown_keys_fail():
    data = json.loads((RECORDINGS / "h200_node_healthy.json").read_text())["observation"]
    older = {k: v for k, v in data.items() if k not in ("efa_devices", "ld_library_path")}
    obs = node.NodeObservation.from_dict(older)
    assert obs.efa_devices == () and obs.ld_library_path == ""
    with pytest.raises(ValueError, match=r"node observation keys \['from_the_future'\]"):
        node.NodeObservation.from_dict({**data, "from_the_future": 1})


def test_probe_node_observation_round_trips_through_json():
    _, obs = load("h200_node_healthy.json")
    assert node.NodeObservation.from_dict(json.loads(json.dumps(obs.to_dict()))) == obs


def _answer(recording: str, outcome: Outcome = Outcome.ANSWERED, detail: str = "") -> NodeAnswer:
    data = json.loads((RECORDINGS / recording).read_text())
    return NodeAnswer(node=NodeFacts(**data["node"]), outcome=outcome, elapsed_s=1.0, detail=detail,
                      observation=data["observation"] if outcome is Outcome.ANSWERED else None)


@pytest.mark.parametrize(("outcome", "detail", "status", "fragment"), [
    (Outcome.ANSWERED, "", Status.PASS, "answered in 1.0 s"),
    (Outcome.TIMEOUT, "no answer within 60 s", Status.UNKNOWN, "did not answer (no answer within 60 s)"),
    (Outcome.DIED, "NodeDiedError: the raylet died", Status.UNKNOWN, "died during the check"),
    (Outcome.ERROR, "ran on another node", Status.UNKNOWN, "probe failed (ran on another node)"),
])
def test_probe_node_answer_is_pass_only_when_the_node_answered(outcome, detail, status, fragment):
    verdict = evaluate_node_answer(_answer("h200_node_healthy.json", outcome, detail))
    assert verdict.status is status and fragment in verdict.summary
    assert verdict.node and (verdict.remedy == "") == (status is Status.PASS)


def test_probe_node_judge_nodes_marks_silent_and_dead_nodes_unknown():
    result = FanoutResult(address="127.0.0.1:6379", connected=True, tried="ray.init", nodes=(
        _answer("h200_node_healthy.json"), _answer("h200_node_7_gpus.json", Outcome.TIMEOUT, "no answer within 60 s"),
        _answer("cpu_worker.json", Outcome.DIED, "NodeDiedError: the raylet died")))
    verdicts = judge_nodes(result, GPUS, H200)
    assert [v.status for v in verdicts] == [Status.PASS, Status.UNKNOWN, Status.UNKNOWN]
    assert "did not answer (no answer within 60 s)" in verdicts[1].summary
    assert "died during the check (NodeDiedError" in verdicts[2].summary


def test_probe_node_unreachable_ray_is_one_unknown_naming_what_was_tried():
    result = FanoutResult(address="ray://10.0.0.1:10001", connected=False, tried="ray.init with a 30 s deadline",
                          error="ray.init did not return within 30 s")
    for verdict in (*judge_nodes(result, SHM, H200), evaluate_reachable(result),
                    evaluate_cluster_gpus(collect_cluster_gpus(result), 16, "qwen3-4b-colocated")):
        assert verdict.status is Status.UNKNOWN and "ray://10.0.0.1:10001 not reached" in verdict.summary


def _oversubscribed_30b():
    return next(v for v in BAD_VARIANTS if v.failure_id == "placement-group-oversubscribed").build()


@pytest.mark.parametrize(("gpus_per_node", "build", "status", "fragment"), [
    ((8.0, 8.0, 0.0), lambda: recipes.get("qwen3-4b-colocated"), Status.PASS,
     "16 GPU(s) on 3 alive node(s); recipe qwen3-4b-colocated"),
    ((8.0, 0.0), lambda: recipes.get("qwen3-30b-a3b-disaggregated"), Status.FAIL,
     "8 GPU(s) on 2 alive node(s); recipe qwen3-30b-a3b-disaggregated asks for 16"),
    ((8.0, 8.0, 0.0), _oversubscribed_30b, Status.FAIL,
     "16 GPU(s) on 3 alive node(s); recipe qwen3-30b-a3b-disaggregated asks for 20"),
    ((4.0,) * 8, lambda: recipes.get("glm5.2-gb300", "gb300"), Status.FAIL,
     "32 GPU(s) on 8 alive node(s); recipe glm5.2-gb300 asks for 64"),
], ids=["4b-fits", "30b-on-8", "30b-as-shipped-20-on-16", "glm-on-32"])
def test_probe_cluster_gpus_against_recipe(gpus_per_node, build, status, fragment):
    recipe = build()
    facts = [NodeFacts(node_id=f"{i:056x}", address="10.0.0.1", hostname=f"n{i}", is_head=i == 0, ray_gpus=g)
             for i, g in enumerate(gpus_per_node)]
    result = FanoutResult(address="x", connected=True, tried="t",
                          nodes=tuple(NodeAnswer(node=f, outcome=Outcome.TIMEOUT, elapsed_s=1) for f in facts))
    verdict = evaluate_cluster_gpus(collect_cluster_gpus(result), gpus_needed(recipe), recipe.id)
    assert verdict.status is status and fragment in verdict.summary
    assert verdict.failure_id == "placement-group-oversubscribed"


@pytest.mark.parametrize(("driver", "cuda_major"), [("580.65.06", 13), ("550.54.15", 12), ("470.82.01", 11),
                                                    ("418.87", 0), ("", None)])
def test_probe_node_driver_branch_to_cuda_major(driver, cuda_major):
    assert judge.driver_cuda_major(driver) == cuda_major


# --- the collector's readers, on this machine and on small trees made here -------------------------------


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_probe_node_efa_counts_efa_driver_and_rdmap_names_not_mlx5(tmp_path):
    drivers = tmp_path / "drivers"
    for name in ("efa", "mlx5_core"):
        (drivers / name).mkdir(parents=True)
    for device, driver in (("rdmap79s0", "efa"), ("efa_3", "efa"), ("ibp12s0", "mlx5_core"), ("mlx5_0", "mlx5_core")):
        (tmp_path / "ib" / device / "device").mkdir(parents=True)
        (tmp_path / "ib" / device / "device" / "driver").symlink_to(drivers / driver)
    (tmp_path / "ib" / "rdmap80s0").mkdir()  # driver link unreadable: counted by its name
    (tmp_path / "ib" / "ibp13s0").mkdir()  # unreadable and not an EFA name
    assert node.read_efa_devices(tmp_path / "ib") == ("efa_3", "rdmap79s0", "rdmap80s0")
    assert node.read_efa_devices(tmp_path / "absent") == ()


def test_probe_node_reads_gpus_from_nvidia_smi_on_path(tmp_path, monkeypatch):
    line = "NVIDIA H200, 9.0, 143771, 580.65.06"
    _executable(tmp_path / "nvidia-smi", "#!/bin/sh\n" + "".join(f"echo '{line}'\n" for _ in range(8)))
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    reading = gpus.read_gpus(timeout_s=10)
    assert len(reading.gpus) == 8 and reading.driver_version == "580.65.06" and not reading.error
    assert gpus.match_profile(reading.gpus) == hardware.get_profile("h200")


def test_probe_node_hung_nvidia_smi_is_an_error_within_its_bound(tmp_path, monkeypatch):
    _executable(tmp_path / "nvidia-smi", "#!/bin/sh\nexec sleep 60\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    start = time.monotonic()
    reading = gpus.read_gpus(timeout_s=1)
    assert reading.error == "nvidia-smi did not answer within 1 s" and reading.gpus == ()
    assert time.monotonic() - start < 10


def test_probe_node_driver_file_and_torch_version_are_read_without_imports(tmp_path):
    version = tmp_path / "version"
    version.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build\n")
    assert node.read_driver_file(version) == "580.65.06"
    assert node.read_driver_file(tmp_path / "absent") == ""
    torch_version, torch_cuda = node.read_torch()
    assert torch_version.startswith("2.") and torch_cuda.startswith("13.")  # parsed from torch/version.py


def test_probe_node_collect_on_this_machine_is_plain_data():
    obs = node.collect_node(tool_timeout_s=30)
    assert obs.shm_bytes and obs.tms.rule == node.TMS_RULE and obs.hostname
    assert node.NodeObservation.from_dict(json.loads(json.dumps(obs.to_dict()))) == obs


def test_probe_node_collector_module_imports_nothing_heavy():
    """It is imported by the Ray worker of every node: only the standard library may load with it."""
    code = ("import sys, rlcheck.probes.node.collect, rlcheck.cluster.fanout; "
            "print(sorted(m for m in ('ray', 'torch', 'numpy', 'pytest', 'packaging') if m in sys.modules))")
    done = subproc.python(code, timeout_s=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.tail()


@pytest.mark.parametrize(("rule", "library"), [("slime-v0.2.4", f"{tms.STEM}.abi3.so"),
                                                ("slime-v0.3.1", f"{tms.STEM}_cu12.abi3.so"),
                                                ("slime-main", f"{tms.STEM}_cu13.abi3.so")])
def test_probe_node_read_tms_follows_the_rule_it_is_given(rule, library):
    reading = node.read_tms(rule, "")
    assert reading.rule == rule and reading.library == library and not reading.error


def test_probe_node_read_tms_package_rule_asks_torch_memory_saver():
    """Miles' rule: the package's own CUDA-aware pick for this torch (cu13 here: torch is a cu130 build)."""
    reading = node.read_tms(tms.PACKAGE_RULE, "")
    assert reading.rule == tms.PACKAGE_RULE and reading.library.startswith(tms.STEM) and not reading.error, reading


def test_probe_node_unknown_tms_rule_is_refused_naming_the_rules():
    with pytest.raises(ValueError, match="tms_rule='slime-v9': one of slime-v0.2.4, slime-v0.3.1, slime-main, miles"):
        node.collect_node(tms_rule="slime-v9")
