"""The checkpoint's architecture against what the engine, the bridge and the converter know
(catalogue: architecture-unsupported).

config.json names `architectures` (what SGLang's ModelRegistry resolves) and `model_type` (what AutoConfig, mbridge
and SLIME's loaders key on). SLIME's weight update converts every tensor Megatron -> HF by a fragment of the
config class name (megatron_to_hf _convert_to_hf_core; `--megatron-to-hf-mode bridge` asks mbridge instead, by
model_type): a model none of them names raises "Unsupported model: ..." at the first update, after the engines
are up. SGLang without a native implementation falls back to its Transformers backend when the model allows
(model_loader/utils.py get_model_architecture), else raises "Model architectures [...] are not supported".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import rlcheck.repro.image_facts as image_facts
from rlcheck import catalog
from rlcheck.framework.argv import option
from rlcheck.probes.node.packages import package_root
from rlcheck.probes.recipe import model_registry
from rlcheck.probes.recipe.hf_config import HfConfigObservation, collect_hf_config
from rlcheck.probes.recipe.model_registry import KnownList
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "architecture-unsupported"
CONVERTERS = {"slime": "slime/backends/megatron_utils/megatron_to_hf/__init__.py",
              "miles": "miles/backends/megatron_utils/megatron_to_hf/__init__.py"}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ArchitectureObservation:
    hf: HfConfigObservation
    """The checkpoint's config.json as read."""
    lists: Mapping[str, KnownList]
    """model_registry.KINDS -> names: the installed packages' where readable here, else the committed ones."""


def kept_names(kind: str, models: Path, read: Callable[[Path], frozenset[str]], pattern: str) -> frozenset[str]:
    """read(models), kept per image (rlcheck.repro.image_facts, keyed on the modules of the folder that `pattern`
    matches, the ones read reads, and on the reader's own source): a second preflight of the same image reads the
    list instead of parsing SGLang's ~200 model modules again. The names are the same either way, so the verdict
    reads the same."""
    recalled = image_facts.recall(f"{kind}-models", Path(model_registry.__file__).read_text(encoding="utf-8"),
                                  sorted(models.glob(pattern)), lambda: {"names": sorted(read(models))})
    return frozenset(map(str, recalled.fact["names"])) if recalled.fact is not None else read(models)


def _installed(kind: str) -> KnownList | None:
    """The list read from a package installed here (None when it is not)."""
    if kind == "sglang" and (root := package_root("sglang")) and (root / "sglang/srt/models").is_dir():
        names = kept_names(kind, root / "sglang/srt/models", model_registry.sglang_architectures, "*.py")
        return KnownList(kind=kind, names=names, source=f"installed {root / 'sglang/srt/models'}")
    if kind == "mbridge" and (root := package_root("mbridge")) and (root / "mbridge/models").is_dir():
        names = kept_names(kind, root / "mbridge/models", model_registry.mbridge_model_types, "**/*.py")
        return KnownList(kind=kind, names=names, source=f"installed {root / 'mbridge/models'}")
    framework = kind.removesuffix("_megatron_to_hf")
    root = package_root(framework) if framework in CONVERTERS else None
    if root and (path := root / CONVERTERS[framework]).exists():
        names = model_registry.converter_fragments(path.read_text(encoding="utf-8"))
        return KnownList(kind=kind, names=names, source=f"installed {path}") if names else None
    return None


def collect_architecture(argv: Sequence[str]) -> ArchitectureObservation:
    committed = model_registry.load()
    lists = {kind: _installed(kind) or known for kind, known in committed.items()}
    return ArchitectureObservation(hf=collect_hf_config(argv), lists=lists)


def config_class_names(config: Mapping[str, Any], argv: Sequence[str]) -> set[str]:
    """The lower-cased names the converter may be given: --model-name, else the config class (auto_map's
    AutoConfig for remote code, else model_type + 'config', with and without _ and -)."""
    given = option(argv, "--model-name")
    if given:
        return {given.lower()}
    auto = config.get("auto_map")
    if isinstance(auto, dict) and isinstance(auto.get("AutoConfig"), str):
        return {auto["AutoConfig"].rsplit(".", 1)[-1].lower()}
    model_type = str(config.get("model_type", "")).lower()
    return {model_type + "config", model_type.replace("_", "").replace("-", "") + "config"} if model_type else set()


def _trainer_gap(config: Mapping[str, Any], argv: Sequence[str], framework: str,
                 lists: Mapping[str, KnownList]) -> tuple[str, str]:
    """(what the trainer side lacks or '', what was compared)."""
    model_type = str(config.get("model_type", ""))
    if option(argv, "--megatron-to-hf-mode") == "bridge":
        if framework != "slime":
            return "", "Megatron-Bridge (Miles' bridge mode) not judged: its list is not shipped"
        known = lists["mbridge"]
        if model_type in known.names:
            return "", f"model_type {model_type} in mbridge ({known.source})"
        return (f"mbridge has no bridge for model_type {model_type or '(none)'} ({known.source}): AutoBridge raises "
                "'Unregistered model type'"), ""
    known = lists[f"{framework}_megatron_to_hf"]
    names = config_class_names(config, argv)
    if framework == "slime":
        names = {n.replace("_", "").replace("-", "") for n in names}
    hit = sorted(f for f in known.names if any(f in n for n in names))
    if hit:
        return "", f"converter fragment '{hit[0]}' in {'/'.join(sorted(names))}"
    return (f"{framework.capitalize()}'s Megatron-to-HF converter ({known.source}) names none of "
            f"{', '.join(sorted(names)) or 'no config class'}: the first weight update raises 'Unsupported model'"), ""


def evaluate_architecture(obs: ArchitectureObservation, argv: Sequence[str], framework: str, name: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    hf = obs.hf
    if hf.not_here:
        return Verdict(**base, status=Status.SKIP, summary=f"{name}: the checkpoint is not on this machine "
                                                           f"({hf.error}): judged where it is mounted")
    if hf.config is None:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{name}: cannot read {hf.path or '--hf-checkpoint'} "
                                                              f"({hf.error}): the architecture is not judged")
    config = hf.config
    archs = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    if not archs and not config.get("model_type"):
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{name}: {hf.path} names no architectures and no "
                                                              "model_type")
    remedy = catalog.get(FAILURE_ID).remedy
    gap, compared = _trainer_gap(config, argv, framework, obs.lists)
    sglang = obs.lists["sglang"]
    native = [a for a in archs if a in sglang.names]
    engine = "" if native else (f"SGLang ({sglang.source}) has no native {', '.join(archs) or 'architecture'}: it "
                                "runs only on its Transformers fallback, where the model allows one")
    if gap:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{name}: {hf.path}: {'; '.join(x for x in (gap, engine) if x)}")
    if engine:
        return Verdict(**base, status=Status.WARN, remedy=remedy, summary=f"{name}: {hf.path}: {engine}; {compared}")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{name}: {', '.join(native)} native in SGLang; {compared} ({Path(hf.path).name})")
