"""Hardware profiles (data: rlcheck/data/hardware/*.toml) and detection of this machine's GPUs."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rlcheck.data_types import check_fields

DATA_DIR = Path(__file__).parent / "data" / "hardware"
FIGURES = (
    "gpu_model", "compute_capability", "hbm_gib", "gpus_per_node", "efa_interfaces_per_node",
    "cpu_arch", "nvlink_domain_gpus", "instance_types",
)
CPU_ARCHES = ("x86_64", "aarch64")
PROFILE_FIELDS = {
    "name": "str", "gpu_model": "str", "gpu_name_patterns": "list[str]", "compute_capability": "str",
    "hbm_gib": "number", "gpus_per_node": "int", "efa_interfaces_per_node": "int", "cpu_arch": "str",
    "nvlink_domain_gpus": "int", "instance_types": "list[str]", "source": "table[str]",
    "alternatives": "list[table]", "thresholds": "table[number]", "provenance": "table[str]",
}
OPTIONAL = ("alternatives", "thresholds", "provenance")
PERFORMANCE_FLOORS = ("bf16_gemm_min_tflops", "nccl_allreduce_min_busbw_gbps", "nccl_pair_min_busbw_gbps")
THRESHOLDS = (*PERFORMANCE_FLOORS, "shm_min_gib")
"""Every threshold a profile may set (Thresholds' fields): a name outside these is refused, never ignored."""
"""Thresholds that are rates a machine measures: each one says where its number comes from (provenance)."""
PROVENANCE = ("measured", "public", "baseline")
"""measured: run on this hardware by rlcheck's own measure (below it is FAIL); public: vendor peak or published
nccl-tests figures, never run here (below it is WARN until a measured floor replaces it); baseline: this cluster's
own healthy run, recorded with `rlcheck baseline record` (FAIL)."""
ALTERNATIVE_FIELDS = {"field": "str", "value": "number", "source": "str"}


class ProfileError(ValueError):
    """A hardware profile file is malformed; the message names the file and the field."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Alternative:
    field: str
    """Which figure a source gives differently."""
    value: float
    source: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Thresholds:
    """A profile's floors, typed: each is a finite number > 0 or None (not set: the check that needs it says so)."""

    bf16_gemm_min_tflops: float | None = None
    """One GPU's bf16 GEMM, TFLOP/s (gpu_bf16_gemm)."""
    nccl_allreduce_min_busbw_gbps: float | None = None
    """All-reduce bus bandwidth across this node's GPUs, GB/s (gpu_nccl_allreduce)."""
    nccl_pair_min_busbw_gbps: float | None = None
    """All-reduce bus bandwidth between two nodes, GB/s (cluster pairs)."""
    shm_min_gib: float | None = None
    """/dev/shm size a node needs, GiB (NCCL's shared memory, Ray's object store)."""

    def __post_init__(self) -> None:
        for name in THRESHOLDS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"thresholds.{name}={value!r}: must be a finite number > 0")

    @classmethod
    def of(cls, table: Mapping[str, float] | Thresholds) -> Thresholds:
        """From a profile file's [thresholds] table; an unknown name is refused naming the ones allowed."""
        if isinstance(table, Thresholds):
            return table
        if unknown := sorted(set(table) - set(THRESHOLDS)):
            raise ValueError(f"thresholds: unknown {', '.join(unknown)}; allowed: {', '.join(THRESHOLDS)}")
        return cls(**table)

    def get(self, name: str) -> float | None:
        """The floor by name (a check that names its floor in a constant); a name that is no threshold is a bug."""
        if name not in THRESHOLDS:
            raise KeyError(f"{name!r} is no threshold: one of {', '.join(THRESHOLDS)}")
        value: float | None = getattr(self, name)
        return value

    def items(self) -> list[tuple[str, float]]:
        """The floors that are set, in THRESHOLDS order."""
        return [(name, value) for name in THRESHOLDS if (value := getattr(self, name)) is not None]

    def keys(self) -> list[str]:
        """The names of the floors that are set (with __getitem__, `{**thresholds}` reads as a plain table)."""
        return [name for name, _ in self.items()]

    def __getitem__(self, name: str) -> float:
        value = self.get(name)
        if value is None:
            raise KeyError(f"{name}: not set in this profile")
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, name: object) -> bool:
        return name in THRESHOLDS and getattr(self, str(name)) is not None

    def replace(self, floors: Mapping[str, float]) -> Thresholds:
        """These floors with some replaced (a cluster's baseline); unknown names are refused as in of()."""
        return Thresholds.of({**dict(self.items()), **floors})


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class HardwareProfile:
    name: str
    """Profile id used by --hardware (h100, h200, b200, b300, gb200, gb300)."""
    gpu_model: str
    gpu_name_patterns: tuple[str, ...]
    """Regexes over the GPU name nvidia-smi prints; used by --hardware=auto."""
    compute_capability: str
    """CUDA compute capability, e.g. '9.0', '10.3'."""
    hbm_gib: float
    """GPU memory per GPU in GiB, the figure the checks use."""
    gpus_per_node: int
    efa_interfaces_per_node: int
    cpu_arch: str
    """Host CPU architecture: x86_64 or aarch64."""
    nvlink_domain_gpus: int
    """GPUs in one NVLink domain (8 for HGX boards, 72 for NVL72 racks)."""
    instance_types: tuple[str, ...]
    source: dict[str, str]
    """Where every figure comes from (one entry per figure)."""
    alternatives: tuple[Alternative, ...] = ()
    """Figures other sources give, kept beside the one the checks use."""
    thresholds: Thresholds = dataclasses.field(default_factory=Thresholds)
    """Floors and limits for checks, names carry units; each needs a source entry (a mapping given here is read
    through Thresholds.of: an unknown name is refused)."""
    provenance: dict[str, str] = dataclasses.field(default_factory=dict)
    """Performance floor -> measured | public | baseline (see PROVENANCE); every PERFORMANCE_FLOORS entry needs one."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "thresholds", Thresholds.of(self.thresholds))
        cc = self.compute_capability
        if not re.fullmatch(r"\d+\.\d+", cc):
            raise ValueError(f"compute_capability={cc!r}: expected MAJOR.MINOR such as '9.0' or '10.3'")
        if self.cpu_arch not in CPU_ARCHES:
            raise ValueError(f"cpu_arch={self.cpu_arch!r}: one of {', '.join(CPU_ARCHES)}")
        for field in ("hbm_gib", "gpus_per_node", "nvlink_domain_gpus"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field}={getattr(self, field)!r}: must be > 0")
        if self.efa_interfaces_per_node < 0:
            raise ValueError(f"efa_interfaces_per_node={self.efa_interfaces_per_node}: must be >= 0")
        missing = [f for f in (*FIGURES, *self.thresholds) if not self.source.get(f)]
        if missing:
            raise ValueError(f"source: no source for {', '.join(missing)} (every figure needs one)")
        for pattern in self.gpu_name_patterns:
            re.compile(pattern)
        self._check_provenance()

    def _check_provenance(self) -> None:
        for name, kind in self.provenance.items():
            if name not in self.thresholds:
                raise ValueError(f"provenance.{name}: not a threshold of this profile ({', '.join(self.thresholds)})")
            if kind not in PROVENANCE:
                raise ValueError(f"provenance.{name}={kind!r}: one of {', '.join(PROVENANCE)}")
        unsaid = [f for f in PERFORMANCE_FLOORS if f in self.thresholds and f not in self.provenance]
        if unsaid:
            raise ValueError(f"provenance: {', '.join(unsaid)} must say measured, public or baseline")

    def floor_measured(self, name: str) -> bool:
        """Whether a result below this floor is a FAIL (measured here or this cluster's baseline), not a WARN."""
        return self.provenance.get(name, "measured") != "public"

    @property
    def sm(self) -> int:
        """Compute capability as the sm_XX number (9.0 -> 90, 10.3 -> 103)."""
        major, minor = self.compute_capability.split(".")
        return int(major) * 10 + int(minor)

    def matches_gpu_name(self, gpu_name: str) -> bool:
        return any(re.search(p, gpu_name) for p in self.gpu_name_patterns)


def _profile_from_toml(path: Path) -> HardwareProfile:
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read profile: {exc}") from exc
    try:
        check_fields(raw, PROFILE_FIELDS, tuple(k for k in PROFILE_FIELDS if k not in OPTIONAL))
        for alt in raw.get("alternatives", ()):
            check_fields(alt, ALTERNATIVE_FIELDS, tuple(ALTERNATIVE_FIELDS))
        alternatives = tuple(Alternative(**a) for a in raw.pop("alternatives", []))
        profile = HardwareProfile(
            **{**raw, "gpu_name_patterns": tuple(raw.get("gpu_name_patterns", ())),
               "instance_types": tuple(raw.get("instance_types", ())), "alternatives": alternatives}
        )
    except (TypeError, ValueError, re.error) as exc:
        raise ProfileError(f"{path}: {exc}") from exc
    if profile.name != path.stem:
        raise ProfileError(f"{path}: name={profile.name!r} must equal the file name {path.stem!r}")
    return profile


def load_profiles(data_dir: Path | None = None) -> dict[str, HardwareProfile]:
    """Every profile by name (DATA_DIR when no directory is given), validated; a malformed file raises
    ProfileError naming the file and the field."""
    return _load_profiles(data_dir or DATA_DIR)


@functools.cache
def _load_profiles(data_dir: Path) -> dict[str, HardwareProfile]:
    return {p.stem: _profile_from_toml(p) for p in sorted(data_dir.glob("*.toml"))}


def get_profile(name: str) -> HardwareProfile:
    profiles = load_profiles()
    if name not in profiles:
        raise KeyError(f"unknown hardware {name!r}: valid are {', '.join(profiles)}, auto, none")
    return profiles[name]
