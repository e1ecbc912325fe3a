"""The check registry: every registered check FAILs on a recorded bad input and passes a healthy one, through the
registry's own judge; checks/, the README table and docs/known-failures.md agree with it by construction."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path

import pytest

from rlcheck import catalog, preflight, recipes
from rlcheck.cluster.fanout_result import FanoutResult
from rlcheck.hardware import get_profile
from rlcheck.preflight import gate
from rlcheck.preflight.docs import checks_table, with_checks_table
from rlcheck.preflight.registry import Check, Inputs, Need, validate
from rlcheck.probes.gpu.gpu_smoke import AllReduceObservation, GemmObservation
from rlcheck.probes.image import image, slime_source
from rlcheck.probes.image.numpy_megatron import collect_numpy_megatron
from rlcheck.probes.node.packages import RecordedPackages
from rlcheck.process import subproc
from rlcheck.recipes.recipe import with_sglang
from rlcheck.verdict import Status
from tests.bad_recipes import BAD_VARIANTS
from tests.probes.node.test_probe_node import _answer
from tests.probes.recipe.test_probe_sglang_flags import recorded as sglang_recorded

ROOT = Path(__file__).resolve().parents[1]
OBS = Path(__file__).parent / "data" / "observations"
H200, GB300 = get_profile("h200"), get_profile("gb300")


def _inputs(recipe_id: str = "qwen3-4b-colocated", hw: str | None = "h200", **kw) -> Inputs:
    base = gate.inputs_for(recipe_id, get_profile(hw) if hw else None)
    return dataclasses.replace(base, **kw)


def _variant(failure_id: str) -> Inputs:
    v = next(v for v in BAD_VARIANTS if v.failure_id == failure_id)
    return Inputs(recipe=v.build(), profile=get_profile(v.hardware))


def _fanout(*recordings: str) -> FanoutResult:
    return FanoutResult(address="127.0.0.1:6379", connected=True, tried="ray.init",
                        nodes=tuple(_answer(r) for r in recordings))


def _numpy(recording: str):
    return collect_numpy_megatron(RecordedPackages.from_file(OBS / "numpy_megatron" / recording))


def _guard(wrapper: bool):
    return slime_source.GuardObservation(framework="slime", wrapper_guards=wrapper, rlcheck_guard=False)


def _kernel(merge: bool):
    return slime_source.KernelObservation(kernel="slime_plugins/.../tilelang_sparse_mla_bwd.py", merge=merge,
                                          tilelang="0.1.9")


HEALTHY_NODES = _fanout("head_gpuless.json", "h200_node_healthy.json", "h200_node_healthy.json")
NOT_REACHED = FanoutResult(address="ray://127.0.0.1:10001", connected=False, tried="ray.init", error="refused")
GLM_32_GPUS = Inputs(recipe=recipes.get("glm5.2-gb300", GB300), profile=GB300)

# check id -> [(label, inputs, observation, status)]: both sides of each check, through check.run.
CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "image_numpy_major": [("numpy1-megatron-0.19", _inputs(), _numpy("healthy_numpy1_megatron_0_19.json"), Status.PASS),
                          ("numpy2-megatron-0.15", _inputs(), _numpy("numpy2_megatron_0_15_pinned.json"), Status.FAIL)],
    "image_megatron_training": [
        ("0.19.2", _inputs(), image.MegatronObservation(megatron_core="0.19.2", has_core=True, has_training=True),
         Status.PASS),
        ("0.16.1-no-training", _inputs(),
         image.MegatronObservation(megatron_core="0.16.1", has_core=True, has_training=False), Status.FAIL)],
    "image_mbridge": [("moe-with-mbridge", _inputs("qwen3-30b-a3b-disaggregated"),
                       image.MbridgeObservation(has_mbridge=True), Status.PASS),
                      ("moe-slime-0.3.1-without-mbridge", _inputs("qwen3-30b-a3b-disaggregated"),
                       image.MbridgeObservation(has_mbridge=False, slime="0.3.1"), Status.SKIP),
                      ("moe-slime-main-without-mbridge", _inputs("qwen3-30b-a3b-disaggregated"),
                       image.MbridgeObservation(has_mbridge=False, slime="main"), Status.SKIP),
                      ("moe-slime-unknown-release-without-mbridge", _inputs("qwen3-30b-a3b-disaggregated"),
                       image.MbridgeObservation(has_mbridge=False, slime="unknown"), Status.UNKNOWN),
                      ("moe-without-mbridge", _inputs("qwen3-30b-a3b-disaggregated"),
                       image.MbridgeObservation(has_mbridge=False, slime="0.2.4"), Status.FAIL)],
    "image_versions": [("none-live", _inputs(), {"numpy": "1.26.4"}, Status.PASS),
                       ("numpy2-megatron-0.15", _inputs(), {"numpy": "2.2.6", "megatron-core": "0.15.0"},
                        Status.WARN)],
    "image_cpu_arch": [("x86-on-h200", _inputs(), image.ArchObservation(machine="x86_64", foreign_wheels=()),
                        Status.PASS),
                       ("x86-for-gb300", _inputs(hw="gb300"), image.ArchObservation(machine="x86_64",
                                                                                      foreign_wheels=()),
                        Status.FAIL)],
    "image_driver_guard": [("guarded", _inputs("qwen3-30b-a3b-disaggregated"), _guard(True), Status.PASS),
                           ("unguarded-tp2", _inputs("qwen3-30b-a3b-disaggregated"), _guard(False), Status.FAIL),
                           ("no-framework-here-tp2", _inputs("qwen3-30b-a3b-disaggregated"),
                            slime_source.GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=False),
                            Status.SKIP)],
    "image_sparse_mla_merge": [("merge-off", _inputs(), _kernel(False), Status.PASS),
                               ("merge-on-0.1.9", _inputs(), _kernel(True), Status.FAIL)],
    "recipe_fits_hardware": [("4b-on-h200", _inputs(), None, Status.PASS),
                             ("glm-on-h200", _inputs("glm5.2-gb300", "h200"), None, Status.FAIL)],
    "recipe_batch": [("4b", _inputs(), None, Status.PASS),
                     ("96-for-128", _variant("batch-size-mismatch"), None, Status.FAIL)],
    "recipe_layout": [("4b", _inputs(), None, Status.PASS),
                      ("tp3-on-16", _inputs(recipe=recipes.get("qwen3-30b-a3b-disaggregated", H200).replace(
                          parallel=dataclasses.replace(recipes.get("qwen3-30b-a3b-disaggregated", H200).parallel,
                                                       tp=5))), None, Status.FAIL)],
    "recipe_engines": [("glm-pd", _inputs("glm5.2-gb300", "gb300"), None, Status.PASS),
                       ("engine-8-on-4", _variant("engine-larger-than-node"), None, Status.FAIL)],
    "recipe_log_levels": [("warning", _inputs(), None, Status.PASS),
                          ("WARN", _inputs(recipe=with_sglang(recipes.get("qwen3-4b-colocated", H200),
                                                              {"log-level": "WARN"})), None, Status.FAIL),
                          ("WARNING", _inputs(recipe=with_sglang(recipes.get("qwen3-4b-colocated", H200),
                                                                 {"log-level": "WARNING"})), None, Status.FAIL)],
    "recipe_cuda_device_max_connections": [
        ("30b-h200", _inputs("qwen3-30b-a3b-disaggregated"), None, Status.PASS),
        ("30b-h200-unset", _variant("cuda-device-max-connections"), None, Status.FAIL)],
    "recipe_pp_split": [("glm", _inputs("glm5.2-gb300", "gb300"), None, Status.PASS),
                        ("split-on-21", _variant("pp-split-skip-layer"), None, Status.FAIL)],
    "recipe_sglang_flags": [("4b", _inputs(), sglang_recorded(), Status.PASS),
                            ("enable-ep-moe", _variant("sglang-dead-flag"), sglang_recorded(), Status.FAIL)],
    "recipe_stage_memory": [("4b", _inputs(), None, Status.PASS),
                            ("glm-gb300-within-the-measured-shortfall", _inputs("glm5.2-gb300", "gb300"), None,
                             Status.WARN),
                            ("glm-pp1", Inputs(recipe=GLM_32_GPUS.recipe.replace(parallel=dataclasses.replace(
                                GLM_32_GPUS.recipe.parallel, pp=1, pp_first_layers=None, pp_last_layers=None)),
                                profile=GB300), None, Status.FAIL)],
    "recipe_kv_pool": [("4b", _inputs(), None, Status.PASS),
                       ("mem-fraction-0.2", _inputs(recipe=recipes.get("qwen3-30b-a3b-disaggregated", H200).replace(
                           sglang=(("mem-fraction-static", "0.2"),))), None, Status.FAIL)],
    "cluster_reachable": [("reached", _inputs(), HEALTHY_NODES, Status.PASS),
                          ("refused", _inputs(), NOT_REACHED, Status.UNKNOWN)],
    "cluster_nodes_answer": [("all", _inputs(), HEALTHY_NODES, Status.PASS),
                             ("refused", _inputs(), NOT_REACHED, Status.UNKNOWN)],
    "cluster_gpus": [("16-for-16", _inputs(), HEALTHY_NODES, Status.PASS),
                     ("16-for-20", _variant("placement-group-oversubscribed"), HEALTHY_NODES, Status.FAIL)],
    "cluster_head_gpuless": [("gpuless", _inputs(), HEALTHY_NODES, Status.PASS),
                             ("head-gpus", _inputs(), _fanout("head_has_gpus.json"), Status.FAIL)],
    "cluster_node_gpus": [("8xH200", _inputs(), _fanout("h200_node_healthy.json"), Status.PASS),
                          ("7-gpus", _inputs(), _fanout("h200_node_7_gpus.json"), Status.FAIL)],
    "cluster_node_driver": [("580", _inputs(), _fanout("h200_node_healthy.json"), Status.PASS),
                            ("550-on-cuda13", _inputs(), _fanout("driver_550_on_cuda13.json"), Status.FAIL)],
    "cluster_node_tms": [("cu13", _inputs(), _fanout("h200_node_healthy.json"), Status.PASS),
                         ("cu12-on-cuda13", _inputs(), _fanout("tms_cu12_on_cuda13.json"), Status.FAIL)],
    "cluster_node_shm": [("100gib", _inputs(), _fanout("h200_node_healthy.json"), Status.PASS),
                         ("64mib", _inputs(), _fanout("shm_64mib.json"), Status.FAIL)],
    "cluster_node_efa": [("16", _inputs(), _fanout("h200_node_healthy.json"), Status.PASS),
                         ("8-of-16", _inputs(), _fanout("efa_8_of_16.json"), Status.FAIL)],
    "gpu_bf16_gemm": [("760", _inputs(), GemmObservation(tflops_by_device=(("cuda:0", "NVIDIA H200", 760.0),)),
                       Status.PASS),
                      ("512", _inputs(), GemmObservation(tflops_by_device=(("cuda:0", "NVIDIA H200", 512.5),)),
                       Status.FAIL)],
    "gpu_nccl_allreduce": [("298", _inputs(), AllReduceObservation(world_size=2, size_bytes=2**28, busbw_gbps=298.0),
                            Status.PASS),
                           ("120", _inputs(), AllReduceObservation(world_size=2, size_bytes=2**28, busbw_gbps=120.0),
                            Status.FAIL)],
}
# More rows live beside this file in tests/registry_cases_<area>.py (each a CASES dict of the same shape).
for _path in sorted(Path(__file__).parent.glob("registry_cases_*.py")):
    _extra = importlib.import_module(f"tests.{_path.stem}").CASES
    assert not set(_extra) & set(CASES), f"{_path.name} repeats {set(_extra) & set(CASES)}"
    CASES.update(_extra)
ROWS = [(cid, *case) for cid, cases in CASES.items() for case in cases]


def test_registry_every_check_has_a_recorded_bad_and_a_healthy_input():
    assert set(CASES) == {c.id for c in preflight.all_checks()}
    for cid, cases in CASES.items():
        statuses = {status for *_, status in cases}
        assert Status.PASS in statuses, f"{cid}: no healthy input"
        advisory = preflight.get(cid).advisory
        bad = {Status.FAIL, Status.WARN, Status.UNKNOWN} if advisory else {Status.FAIL}
        assert statuses & bad, f"{cid}: no recorded input that FAILs ({'advisory' if advisory else 'not advisory'})"


def test_registry_advisory_checks_never_fail_on_their_bad_input():
    """An advisory check's bad case is WARN or UNKNOWN; one that can FAIL must not hide behind advisory."""
    for check in preflight.all_checks():
        statuses = {status for *_, status in CASES[check.id]}
        assert not (check.advisory and Status.FAIL in statuses), f"{check.id}: FAILs, so it is not advisory"


@pytest.mark.parametrize(("check_id", "label", "inputs", "observation", "status"), ROWS,
                         ids=[f"{r[0]}-{r[1]}" for r in ROWS])
def test_registry_check_judges_recorded_input(check_id, label, inputs, observation, status):
    check = preflight.get(check_id)
    verdicts = check.run(inputs, observation)
    worst = max((v.status for v in verdicts), key=[Status.SKIP, Status.PASS, Status.WARN, Status.UNKNOWN,
                                                       Status.FAIL].index)
    assert worst is status, "\n".join(v.render() for v in verdicts)
    assert all(v.check_id == check_id for v in verdicts)
    # a recipe not shaped for the hardware is a usage error, not a catalogued failure
    if status is Status.FAIL and check.guards and label != "glm-on-h200":
        assert any(v.failure_id in check.guards and v.remedy for v in verdicts if v.status is Status.FAIL), \
            "a FAIL of a guarding check names its catalogue id and the fix"


def test_registry_rejects_duplicates_unknown_guards_and_bad_ids():
    check = preflight.get("recipe_batch")
    with pytest.raises(ValueError, match="registered twice"):
        validate([check, check], set(catalog.load_catalog()))
    with pytest.raises(ValueError, match=r"guards \['no-such-failure'\]: not in the catalogue"):
        validate([dataclasses.replace(check, guards=("no-such-failure",))], set(catalog.load_catalog()))
    with pytest.raises(ValueError, match="<area>_<property>"):
        Check(id="batch", guards=(), judges="x", judge=lambda o, i: [])
    with pytest.raises(ValueError, match="gpu_count=0 must be > 0 exactly when"):
        Check(id="gpu_x", guards=(), judges="x", judge=lambda o, i: [], needs=frozenset({Need.GPU}))


def test_registry_gate_runs_every_check_without_cluster_or_gpu():
    gated = {c.id for c in preflight.all_checks() if c.in_gate}
    assert {c.id for c in preflight.by_area("recipe")} <= gated
    assert not gated & {c.id for c in (*preflight.by_area("cluster"), *preflight.by_area("gpu"))}


def test_registry_collected_by_checks_with_one_test_id_each():
    done = subproc.run([sys.executable, "-m", "pytest", "checks/", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "--hardware=none"], timeout_s=300, cwd=str(ROOT))
    ids = {line.rsplit("[", 1)[-1].rstrip("]") for line in done.stdout.splitlines() if "::test_" in line}
    assert ids == {c.id for c in preflight.all_checks()}, done.tail(20)


def test_registry_readme_table_and_docs_page_are_generated():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert with_checks_table(readme) == readme, "README check table is stale: run `rlcheck docs --write`"
    assert checks_table() in readme
    for check in preflight.all_checks():
        for failure_id in check.guards:
            assert check.id in preflight.guarded_by()[failure_id]
