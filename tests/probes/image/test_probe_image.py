"""Image probes: recorded observations that PASS, WARN, FAIL, SKIP and stay UNKNOWN."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck.hardware import get_profile
from rlcheck.probes.image import image, slime_source
from rlcheck.verdict import Status

SOURCES = Path(__file__).resolve().parents[2] / "data" / "observations" / "slime_source"


@pytest.mark.parametrize(("obs", "status", "fragment"), [
    (image.MegatronObservation(megatron_core="0.19.2", has_core=True, has_training=True), Status.PASS,
     "megatron-core 0.19.2 provides megatron.training.arguments"),
    (image.MegatronObservation(megatron_core="0.16.1", has_core=True, has_training=False), Status.FAIL,
     "megatron-core 0.16.1 has no megatron.training (validate_args): it ships from megatron-core 0.17.0"),
    (image.MegatronObservation(megatron_core=None, has_core=False, has_training=False), Status.SKIP,
     "needs Megatron (megatron.core): found none installed"),
], ids=["core-0.19", "core-0.16-without-training", "no-megatron"])
def test_probe_megatron_training(obs, status, fragment):
    verdict = image.evaluate_megatron_training(obs)
    assert verdict.status is status and fragment in verdict.summary


@pytest.mark.parametrize(("moe", "present", "status"), [(True, True, Status.PASS), (True, False, Status.FAIL),
                                                         (False, False, Status.SKIP)])
def test_probe_mbridge(moe, present, status):
    assert image.evaluate_mbridge(moe, "qwen3-30b-a3b-disaggregated", present).status is status


@pytest.mark.parametrize(("slime", "status", "fragment"), [
    ("0.2.4", Status.FAIL, "not installed (SLIME 0.2.4)"), ("0.3.0", Status.FAIL, "not installed (SLIME 0.3.0)"),
    ("0.3.1", Status.SKIP, "SLIME 0.3.1 converts HF -> Megatron without mbridge"),
    ("0.4.0.dev0", Status.SKIP, "SLIME 0.4.0.dev0 converts"),
    ("main", Status.SKIP, "SLIME main converts HF -> Megatron without mbridge (its own since 0.3.1)"),
    ("unknown", Status.UNKNOWN, "SLIME of unknown release needs it only before 0.3.1: pass --framework slime=="),
    ("not-a-version", Status.UNKNOWN, "SLIME 'not-a-version' (not a release version)"),
    (None, Status.FAIL, "no SLIME here or declared: judged as the reference image's SLIME v0.2.4"),
], ids=["0.2.4", "0.3.0", "0.3.1", "0.4.0.dev0", "main", "unknown-release", "not-a-version", "no-slime"])
def test_probe_mbridge_internal_from_slime_0_3_1(slime, status, fragment):
    verdict = image.evaluate_mbridge(True, "qwen3-30b-a3b-disaggregated", False, slime)
    assert verdict.status is status and fragment in verdict.summary


@pytest.mark.parametrize("slime", ["unknown", "0.2.4", None])
def test_probe_mbridge_installed_passes_whatever_the_slime(slime):
    assert image.evaluate_mbridge(True, "qwen3-30b-a3b-disaggregated", True, slime).status is Status.PASS


def test_probe_mbridge_collects_the_slime_version():
    obs = image.collect_mbridge()
    assert obs.slime is None  # SLIME is not installed on this machine


@pytest.mark.parametrize(("versions", "status", "fragment"), [
    ({"tilelang": "0.1.15", "numpy": "1.26.4"}, Status.PASS, "no installed version is in a known failure's range"),
    ({"tilelang": "0.1.9", "numpy": "1.26.4"}, Status.WARN, "sparse-mla-bwd-nan"),
    ({"numpy": "2.2.6", "megatron-core": "0.15.3"}, Status.WARN, "numpy2-megatron"),
], ids=["healthy", "tilelang-0.1.9", "numpy2-megatron-0.15"])
def test_probe_versions(versions, status, fragment):
    verdict = image.evaluate_versions(versions)
    assert verdict.status is status and fragment in verdict.summary


@pytest.mark.parametrize(("obs", "profile", "status", "fragment"), [
    (image.ArchObservation(machine="x86_64", foreign_wheels=()), "h200", Status.PASS, "every installed wheel"),
    (image.ArchObservation(machine="aarch64", foreign_wheels=("sglang-router 0.3.2",)), "gb300", Status.FAIL,
     "1 installed wheel(s) built for another CPU than this aarch64 host: sglang-router 0.3.2"),
    (image.ArchObservation(machine="x86_64", foreign_wheels=()), "gb300", Status.FAIL,
     "this image runs on x86_64; gb300 hosts are aarch64"),
], ids=["x86-on-h200", "x86-wheel-on-grace", "x86-image-for-gb300"])
def test_probe_cpu_arch(obs, profile, status, fragment):
    verdict = image.evaluate_arch(obs, get_profile(profile))
    assert verdict.status is status and fragment in verdict.summary


def test_probe_cpu_arch_live_machine_has_no_foreign_wheels():
    assert image.collect_arch().foreign_wheels == ()


@pytest.mark.parametrize(("recording", "guarded"), [("wrapper_guarded.py", True), ("wrapper_unguarded.py", False)])
def test_probe_slime_wrapper_guard_read_with_ast(recording, guarded):
    assert slime_source.guards_probes((SOURCES / recording).read_text()) is guarded


@pytest.mark.parametrize(("obs", "reaches", "status"), [
    (slime_source.GuardObservation(framework="slime", wrapper_guards=True, rlcheck_guard=False), True, Status.PASS),
    (slime_source.GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=True), True, Status.PASS),
    (slime_source.GuardObservation(framework="slime", wrapper_guards=False, rlcheck_guard=False), True, Status.FAIL),
    (slime_source.GuardObservation(framework="slime", wrapper_guards=False, rlcheck_guard=False), False, Status.PASS),
    (slime_source.GuardObservation(framework="miles", wrapper_guards=False, rlcheck_guard=False), True, Status.FAIL),
    # Neither framework here (an off-cluster preflight): nothing to judge, as the sibling image checks say.
    (slime_source.GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=False), True, Status.SKIP),
    (slime_source.GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=False), False, Status.PASS),
], ids=["slime-guarded", "rlcheck-pth", "unguarded-moe", "dense-tp1", "miles-unguarded", "none-here-moe",
        "none-here-dense-tp1"])
def test_probe_driver_guard(obs, reaches, status):
    verdict = slime_source.evaluate_guard(obs, reaches, "qwen3-30b-a3b-disaggregated")
    assert verdict.status is status
    if status is Status.SKIP:
        assert "needs SLIME or Miles installed: found neither" in verdict.summary


@pytest.mark.parametrize(("recording", "merge"), [("bwd_merge_on.py", True), ("bwd_merge_off.py", False),
                                                  ("bwd_merge_string_key.py", True)])
def test_probe_kernel_merge_read_with_ast(recording, merge):
    assert slime_source.merge_setting((SOURCES / recording).read_text()) is merge


@pytest.mark.parametrize(("merge", "tilelang", "status", "fragment"), [
    (True, "0.1.9", Status.FAIL, "turns the aggressive merge on with tilelang 0.1.9"),
    (True, "0.1.15", Status.WARN, "outside the known bad range"),
    (False, "0.1.9", Status.PASS, "aggressive shared-memory merge is off"),
    (True, None, Status.UNKNOWN, "tilelang is not installed"),
], ids=["merge-on-0.1.9", "merge-on-0.1.15", "merge-off", "no-tilelang"])
def test_probe_kernel_merge(merge, tilelang, status, fragment):
    obs = slime_source.KernelObservation(kernel="slime_plugins/.../tilelang_sparse_mla_bwd.py", merge=merge,
                                         tilelang=tilelang)
    verdict = slime_source.evaluate_kernel(obs)
    assert verdict.status is status and fragment in verdict.summary


def test_probe_kernel_absent_is_skip():
    verdict = slime_source.evaluate_kernel(slime_source.KernelObservation(kernel=None, merge=None, tilelang=None))
    assert verdict.status is Status.SKIP


@pytest.mark.parametrize(("recording", "status", "fragment"), [
    ("bwd_merge_on.py", Status.FAIL, "turns the aggressive merge on with tilelang 0.1.9"),
    ("bwd_merge_on_ws_on.py", Status.WARN, "but warp specialization on: measured clean"),
    ("bwd_merge_on_pipelined.py", Status.WARN, "but num_stages >= 1: measured clean"),
    ("bwd_merge_off.py", Status.PASS, "aggressive shared-memory merge is off"),
], ids=["merge-ws-off-stages-0", "ws-on", "pipelined", "merge-off"])
def test_probe_kernel_recorded_sources_on_tilelang_0_1_9(recording, status, fragment):
    obs = slime_source.observe_kernel(recording, (SOURCES / recording).read_text(), "0.1.9")
    verdict = slime_source.evaluate_kernel(obs)
    assert verdict.status is status and fragment in verdict.summary
