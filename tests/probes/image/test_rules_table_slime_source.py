"""Rule table for the SLIME / Miles sources read with `ast` (rlcheck.probes.image.slime_source): whether the
validate_args wrapper guards Megatron's GPU probes, what a kernel's pass_configs say of TileLang's aggressive
shared-memory merge and warp specialization, whether a loop is pipelined (every kind of parameter default), which
installed file is read, and the whole verdicts of both checks on both sides of the affected TileLang range."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.image import slime_source as ss
from rlcheck.probes.image.slime_source import GuardObservation, KernelObservation
from rlcheck.verdict import Status

GUARDED = ("import torch\nif not torch.cuda.is_available():\n"
           "    torch.cuda.get_device_capability = lambda *a: (9, 0)\n")


@pytest.mark.parametrize(("source", "guarded"), [
    (GUARDED, True),
    ("from torch.cuda import is_available\nif not is_available():\n    cuda.get_device_arch_version = f\n", True),
    # a probe replaced with no availability test, or a test with no probe replaced
    ("torch.cuda.get_device_capability = lambda *a: (9, 0)\n", False),
    ("if not torch.cuda.is_available():\n    x = torch.cuda.get_device_capability()\n", False),
    # a module-level name of the probe's is not Megatron's probe
    ("if not torch.cuda.is_available():\n    get_device_capability = f\n", False),
    ("if not torch.cuda.is_available():\n    torch.cuda.other = f\n", False),
])
def test_guards_probes(source, guarded):
    assert ss.guards_probes(source) is guarded


@pytest.mark.parametrize(("source", "merge"), [
    ("cfg = {tilelang.PassConfigKey.TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE: True}\n", True),
    ('cfg = {"TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": False}\n', False),
    # not a boolean, a name, or another dict's key: not set
    ('cfg = {"TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": 1}\n', None),
    ('cfg = {"TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": flag}\n', None),
    ('cfg = {**base, "OTHER": True}\nx = {"a": 1}\n', None),
    ('cfg = {**base, "OTHER": True, "TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": True}\n', True),
    ("x = 1\n", None),
])
def test_merge_setting(source, merge):
    assert ss.merge_setting(source) is merge


@pytest.mark.parametrize(("source", "pipelined"), [
    ("def k(a, num_stages=1): pass\n", True),
    ("def k(a, num_stages=3, b=0): pass\n", True),
    ("def k(a, num_stages=0): pass\n", False),
    ("def k(a, num_stages=None): pass\n", False),
    ('def k(a, num_stages="2"): pass\n', False),
    # a default of another parameter is not num_stages'
    ("def k(num_stages, block=1): pass\n", False),
    ("def k(a, *, num_stages=2): pass\n", True),
    ("def k(a, *, num_stages, b=1): pass\n", False),
    # positional-only parameters share the defaults with the rest
    ("def k(a, num_stages=1, /, b=0): pass\n", True),
    ("def k(num_stages, b=2, /, c=0): pass\n", False),
    ("f = lambda num_stages=2: num_stages\n", True),
])
def test_pipelined(source, pipelined):
    assert ss.pipelined(source) is pipelined


@pytest.mark.parametrize(("source", "escaped"), [
    ('cfg = {"TL_DISABLE_WARP_SPECIALIZED": False}\ndef k(num_stages=1): pass\n', "warp specialization on"),
    ('cfg = {"TL_DISABLE_WARP_SPECIALIZED": True}\ndef k(num_stages=1): pass\n', "num_stages >= 1"),
    ('cfg = {"TL_DISABLE_WARP_SPECIALIZED": True}\ndef k(num_stages=0): pass\n', ""),
    ("def k(num_stages=0): pass\n", ""),
])
def test_observe_kernel_says_why_the_miscompile_is_escaped(source, escaped):
    source += 'merge = {"TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": True}\n'
    assert ss.observe_kernel("k.py", source, "0.1.9") == KernelObservation(kernel="k.py", merge=True,
                                                                            tilelang="0.1.9", escaped=escaped)


PTH = "rlcheck-driver-guard.pth"
GUARD_REMEDY = catalog.get("driver-gpu-probe").remedy


@pytest.mark.parametrize(("obs", "reaches", "status", "summary"), [
    (GuardObservation(framework="slime", wrapper_guards=True, rlcheck_guard=True), True, Status.PASS,
     "Megatron's GPU probes are guarded on the driver by slime's validate_args wrapper"),
    (GuardObservation(framework="miles", wrapper_guards=False, rlcheck_guard=True), True, Status.PASS,
     f"Megatron's GPU probes are guarded on the driver by rlcheck's {PTH}"),
    (GuardObservation(framework="slime", wrapper_guards=False, rlcheck_guard=False), False, Status.PASS,
     "r1 reaches no GPU probe in validate_args (no --moe-grouped-gemm, TP and CP 1)"),
    (GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=False), True, Status.SKIP,
     f"needs SLIME or Miles installed: found neither (nor rlcheck's {PTH}); r1 reaches Megatron's GPU probes in "
     "validate_args: run this check in the image the job runs in"),
    (GuardObservation(framework="miles", wrapper_guards=False, rlcheck_guard=False), True, Status.FAIL,
     "r1 reaches Megatron's GPU probes in validate_args and miles does not guard them: the GPU-less Ray driver "
     "raises 'Found no NVIDIA driver'"),
])
def test_evaluate_guard(obs, reaches, status, summary):
    verdict = ss.evaluate_guard(obs, reaches, "r1")
    assert (verdict.status, verdict.summary, verdict.failure_id) == (status, summary, "driver-gpu-probe")
    assert verdict.remedy == (GUARD_REMEDY if status is Status.FAIL else "")


KERNEL = "/site/slime_plugins/k.py"
NAN = catalog.get("sparse-mla-bwd-nan")


@pytest.mark.parametrize(("obs", "status", "summary"), [
    (KernelObservation(kernel=None, merge=None, tilelang="0.1.9"), Status.SKIP,
     "needs SLIME's or Miles' GLM-5 sparse-MLA kernel: found none installed"),
    (KernelObservation(kernel=KERNEL, merge=False, tilelang="0.1.9"), Status.PASS,
     f"aggressive shared-memory merge is off in {KERNEL}"),
    (KernelObservation(kernel=KERNEL, merge=None, tilelang="0.1.9"), Status.PASS,
     f"aggressive shared-memory merge is off in {KERNEL}"),
    (KernelObservation(kernel=KERNEL, merge=True, tilelang=None), Status.UNKNOWN,
     f"{KERNEL} turns the merge on and tilelang is not installed to tell whether it miscompiles"),
    # the affected range >=0.1.9.dev0,<0.1.11: both ends
    (KernelObservation(kernel=KERNEL, merge=True, tilelang="0.1.9.dev0"), Status.FAIL,
     f"{KERNEL} turns the aggressive merge on with tilelang 0.1.9.dev0 (>=0.1.9.dev0,<0.1.11): dQ/dKV come out NaN"),
    (KernelObservation(kernel=KERNEL, merge=True, tilelang="0.1.10"), Status.FAIL,
     f"{KERNEL} turns the aggressive merge on with tilelang 0.1.10 (>=0.1.9.dev0,<0.1.11): dQ/dKV come out NaN"),
    (KernelObservation(kernel=KERNEL, merge=True, tilelang="0.1.10", escaped="num_stages >= 1"), Status.WARN,
     "merge on with tilelang 0.1.10 but num_stages >= 1: measured clean (kernels/), yet it hides the miscompile "
     "rather than avoiding it"),
    (KernelObservation(kernel=KERNEL, merge=True, tilelang="0.1.11"), Status.WARN,
     "merge on with tilelang 0.1.11, outside the known bad range >=0.1.9.dev0,<0.1.11: the miscompile is fixed "
     "there, the flag is still fragile"),
    (KernelObservation(kernel=KERNEL, merge=True, tilelang="0.1.8", escaped="warp specialization on"), Status.WARN,
     "merge on with tilelang 0.1.8, outside the known bad range >=0.1.9.dev0,<0.1.11: the miscompile is fixed "
     "there, the flag is still fragile"),
])
def test_evaluate_kernel(obs, status, summary):
    assert NAN.affected[0].specifier == ">=0.1.9.dev0,<0.1.11"
    verdict = ss.evaluate_kernel(obs)
    assert (verdict.status, verdict.summary, verdict.failure_id) == (status, summary, "sparse-mla-bwd-nan")
    assert verdict.remedy == (NAN.remedy if status in (Status.WARN, Status.FAIL) else "")


def _install(monkeypatch, tmp_path, files: dict[str, str]) -> None:
    """Files under tmp_path/<top package>/...; package_root finds each top package that has one."""
    for rel, text in files.items():
        path = tmp_path / rel.split("/", 1)[0] / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(ss, "package_root", lambda top: tmp_path / top if (tmp_path / top).is_dir() else None)


@pytest.mark.parametrize(("files", "pth", "observed"), [
    ({ss.WRAPPERS["slime"]: GUARDED, ss.WRAPPERS["miles"]: "x = 1\n"}, False,
     GuardObservation(framework="slime", wrapper_guards=True, rlcheck_guard=False)),
    # SLIME installed without its wrapper file: Miles' is read
    ({"slime/other.py": GUARDED, ss.WRAPPERS["miles"]: "x = 1\n"}, True,
     GuardObservation(framework="miles", wrapper_guards=False, rlcheck_guard=True)),
    ({}, True, GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=True)),
    ({}, False, GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=False)),
])
def test_collect_guard_reads_the_installed_wrapper_and_the_pth(monkeypatch, tmp_path, files, pth, observed):
    _install(monkeypatch, tmp_path / "pkgs", files)
    (tmp_path / "purelib").mkdir()
    if pth:
        (tmp_path / "purelib" / PTH).write_text("", encoding="utf-8")
    monkeypatch.setattr(ss.sysconfig, "get_paths", lambda: {"purelib": str(tmp_path / "purelib")})
    assert ss.collect_guard() == observed


MERGE_ON = 'cfg = {"TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": True}\ndef k(num_stages=1): pass\n'


@pytest.mark.parametrize(("files", "which", "merge", "escaped"), [
    ({ss.KERNELS[0]: MERGE_ON, ss.KERNELS[1]: "x = 1\n"}, 0, True, "num_stages >= 1"),
    ({ss.KERNELS[1]: "x = 1\n"}, 1, None, ""),
    ({"slime_plugins/other.py": MERGE_ON, ss.KERNELS[1]: MERGE_ON}, 1, True, "num_stages >= 1"),
    ({"slime_plugins/other.py": MERGE_ON}, None, None, ""),
])
def test_collect_kernel_reads_the_first_installed_kernel(monkeypatch, tmp_path, files, which, merge, escaped):
    _install(monkeypatch, tmp_path, files)
    monkeypatch.setattr(catalog, "installed_versions", lambda names: dict.fromkeys(names, "0.1.10"))
    kernel = None if which is None else str(tmp_path / ss.KERNELS[which].split("/", 1)[0] / ss.KERNELS[which])
    assert ss.collect_kernel() == KernelObservation(kernel=kernel, merge=merge, tilelang="0.1.10", escaped=escaped)
