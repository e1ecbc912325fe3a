"""Read installed SLIME / Miles sources with `ast` (never importing GPU code): the driver guard, the kernel pass config.

Catalogue: driver-gpu-probe (validate_args wrapper guards Megatron's GPU probes), sparse-mla-bwd-nan
(the sparse-MLA backward kernel turns TileLang's aggressive shared-memory merge on with an affected TileLang).
"""

from __future__ import annotations

import ast
import dataclasses
import sysconfig
from pathlib import Path

from rlcheck import catalog
from rlcheck.probes.node.packages import package_root
from rlcheck.verdict import Status, Verdict

PTH_NAME = "rlcheck-driver-guard.pth"
"""The file name rlcheck.fixes.driver_guard --install writes (the same literal; tests/test_architecture.py keeps them
one: probes do not import fixes, whose TMS fix reads probes)."""

WRAPPERS = {"slime": "slime/backends/megatron_utils/arguments.py", "miles": "miles/utils/arguments.py"}
KERNELS = ("slime_plugins/models/glm5/ops/tilelang_sparse_mla_bwd.py",
           "miles_plugins/models/glm5/ops/tilelang_sparse_mla_bwd.py")
MERGE_KEY = "TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE"
WS_OFF_KEY = "TL_DISABLE_WARP_SPECIALIZED"
PROBES = ("get_device_capability", "get_device_arch_version")


def guards_probes(source: str) -> bool:
    """The code replaces Megatron's GPU probes behind a torch.cuda.is_available() test."""
    tree = ast.parse(source)
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assigned = {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Attribute)}
    return "is_available" in names and any(p in assigned for p in PROBES)


def pass_config(source: str, option: str) -> bool | None:
    """The boolean a kernel's pass_configs give a TileLang option (None: not set)."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            name = key.attr if isinstance(key, ast.Attribute) else getattr(key, "value", None)
            if name == option and isinstance(value, ast.Constant) and isinstance(value.value, bool):
                return value.value
    return None


def merge_setting(source: str) -> bool | None:
    """The value the kernel's pass_configs give TileLang's aggressive shared-memory merge (None: not set)."""
    return pass_config(source, MERGE_KEY)


def pipelined(source: str) -> bool:
    """A `num_stages` default of 1 or more anywhere in the kernel module (positional, positional-only or
    keyword-only parameter)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]  # the defaults belong to the last of these, both kinds
            pairs = [*zip(positional[len(positional) - len(node.defaults):], node.defaults, strict=True),
                     *zip(node.kwonlyargs, node.kw_defaults, strict=True)]
            for arg, default in pairs:
                if arg.arg == "num_stages" and isinstance(default, ast.Constant) \
                        and isinstance(default.value, int) and default.value >= 1:
                    return True
    return False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GuardObservation:
    framework: str | None
    """slime or miles, whichever is installed; None when neither is."""
    wrapper_guards: bool
    rlcheck_guard: bool
    """rlcheck's .pth guard (rlcheck.fixes.driver_guard --install) is in site-packages."""


def collect_guard() -> GuardObservation:
    rlcheck_guard = (Path(sysconfig.get_paths()["purelib"]) / PTH_NAME).exists()
    for framework, rel in WRAPPERS.items():
        root = package_root(framework)
        if root and (root / rel).exists():
            guarded = guards_probes((root / rel).read_text(encoding="utf-8"))
            return GuardObservation(framework=framework, wrapper_guards=guarded, rlcheck_guard=rlcheck_guard)
    return GuardObservation(framework=None, wrapper_guards=False, rlcheck_guard=rlcheck_guard)


def evaluate_guard(obs: GuardObservation, recipe_reaches_probes: bool, recipe_id: str) -> Verdict:
    base = {"failure_id": "driver-gpu-probe"}
    if obs.wrapper_guards or obs.rlcheck_guard:
        how = f"{obs.framework}'s validate_args wrapper" if obs.wrapper_guards else f"rlcheck's {PTH_NAME}"
        return Verdict(**base, status=Status.PASS, summary=f"Megatron's GPU probes are guarded on the driver by {how}")
    if not recipe_reaches_probes:
        return Verdict(**base, status=Status.PASS, summary=f"{recipe_id} reaches no GPU probe in validate_args "
                                                           "(no --moe-grouped-gemm, TP and CP 1)")
    if obs.framework is None:  # off the cluster's image: the guard to judge is not here (as the sibling checks)
        return Verdict(**base, status=Status.SKIP,
                       summary=f"needs SLIME or Miles installed: found neither (nor rlcheck's {PTH_NAME}); "
                               f"{recipe_id} reaches Megatron's GPU probes in validate_args: run this check in the "
                               "image the job runs in")
    return Verdict(**base, status=Status.FAIL, remedy=catalog.get("driver-gpu-probe").remedy,
                   summary=f"{recipe_id} reaches Megatron's GPU probes in validate_args and {obs.framework} does not "
                           "guard them: the GPU-less Ray driver raises 'Found no NVIDIA driver'")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KernelObservation:
    kernel: str | None
    """The installed sparse-MLA backward kernel file, None when no SLIME / Miles GLM-5 plugin is installed."""
    merge: bool | None
    tilelang: str | None
    escaped: str = ""
    """Why the miscompile does not apply although merge is on ('' when it does): warp specialization on,
    or a pipelined (num_stages >= 1) loop; both measured clean on TileLang 0.1.9, and both fragile."""


def observe_kernel(path: str, source: str, tilelang: str | None) -> KernelObservation:
    escaped = ("warp specialization on" if pass_config(source, WS_OFF_KEY) is False else
               "num_stages >= 1" if pipelined(source) else "")
    return KernelObservation(kernel=path, merge=merge_setting(source), tilelang=tilelang, escaped=escaped)


def collect_kernel() -> KernelObservation:
    from rlcheck.catalog import installed_versions

    tilelang = installed_versions(("tilelang",))["tilelang"]
    for rel in KERNELS:
        root = package_root(rel.split("/", 1)[0])
        if root and (root / rel).exists():
            return observe_kernel(str(root / rel), (root / rel).read_text(encoding="utf-8"), tilelang)
    return KernelObservation(kernel=None, merge=None, tilelang=tilelang)


def evaluate_kernel(obs: KernelObservation) -> Verdict:
    base = {"failure_id": "sparse-mla-bwd-nan"}
    entry = catalog.get("sparse-mla-bwd-nan")
    if obs.kernel is None:
        return Verdict(**base, status=Status.SKIP, summary="needs SLIME's or Miles' GLM-5 sparse-MLA kernel: "
                                                           "found none installed")
    if obs.merge is not True:
        return Verdict(**base, status=Status.PASS, summary=f"aggressive shared-memory merge is off in {obs.kernel}")
    if obs.tilelang is None:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{obs.kernel} turns the merge on and tilelang is not "
                                                              "installed to tell whether it miscompiles")
    if entry.live_in({"tilelang": obs.tilelang}) and obs.escaped:
        return Verdict(**base, status=Status.WARN, remedy=entry.remedy,
                       summary=f"merge on with tilelang {obs.tilelang} but {obs.escaped}: measured clean "
                               "(kernels/), yet it hides the miscompile rather than avoiding it")
    if entry.live_in({"tilelang": obs.tilelang}):
        return Verdict(**base, status=Status.FAIL, remedy=entry.remedy,
                       summary=f"{obs.kernel} turns the aggressive merge on with tilelang {obs.tilelang} "
                               f"({entry.affected[0].specifier}): dQ/dKV come out NaN")
    return Verdict(**base, status=Status.WARN, remedy=entry.remedy,
                   summary=f"merge on with tilelang {obs.tilelang}, outside the known bad range "
                           f"{entry.affected[0].specifier}: the miscompile is fixed there, the flag is still fragile")
