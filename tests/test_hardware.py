"""Hardware profiles load as the tool loads them; nvidia-smi output maps to the right profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.probes.node import gpus as gpu_reading

SMI = Path(__file__).parent / "data" / "nvidia_smi"
PROFILES = hardware.load_profiles()
SHIPPED = {"h100": (8, "9.0", "x86_64"), "h200": (8, "9.0", "x86_64"), "b200": (8, "10.0", "x86_64"),
           "b300": (8, "10.3", "x86_64"), "gb200": (4, "10.0", "aarch64"), "gb300": (4, "10.3", "aarch64")}


@pytest.mark.parametrize("name", SHIPPED)
def test_hardware_profile_shipped(name):
    p = PROFILES[name]
    assert (p.gpus_per_node, p.compute_capability, p.cpu_arch) == SHIPPED[name]
    assert p.hbm_gib > 0 and p.instance_types and all(p.source[f] for f in hardware.FIGURES)


def test_hardware_b300_records_disagreeing_memory_sources():
    alternatives = {a.value for a in PROFILES["b300"].alternatives if a.field == "hbm_gib"}
    assert {178.8, 268.2} <= alternatives and PROFILES["b300"].hbm_gib == 249.6


@pytest.mark.parametrize(("recording", "expected"), [
    ("h100.csv", "h100"), ("h200.csv", "h200"), ("b200.csv", "b200"), ("b300.csv", "b300"),
    ("gb200.csv", "gb200"), ("gb300.csv", "gb300"), ("a10g_no_profile.csv", None),
])
def test_hardware_nvidia_smi_maps_to_profile(recording, expected):
    gpus = gpu_reading.parse_nvidia_smi((SMI / recording).read_text())
    profile = gpu_reading.match_profile(gpus)
    assert (profile.name if profile else None) == expected


def test_hardware_nvidia_smi_parse_skips_garbage():
    gpus = gpu_reading.parse_nvidia_smi("NVIDIA H200, 9.0, 143771\nNo devices were found\n, ,\n")
    assert gpus == (gpu_reading.GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=143771),)


@pytest.mark.parametrize(("change", "message"), [
    ('compute_capability = "9"', "compute_capability='9': expected MAJOR.MINOR"),
    ('cpu_arch = "arm64"', "cpu_arch='arm64': one of x86_64, aarch64"),
    ('gpus_per_node = 0', "gpus_per_node=0: must be > 0"),
    ('name = "other"', "name='other' must equal the file name 'h200'"),
])
def test_hardware_bad_profile_refused_naming_file(tmp_path, change, message):
    text = (hardware.DATA_DIR / "h200.toml").read_text()
    key = change.split("=")[0].strip()
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))  # the figure, not its source
    lines[first] = change
    (tmp_path / "h200.toml").write_text("\n".join(lines))
    with pytest.raises(hardware.ProfileError, match="h200.toml: ") as err:
        hardware.load_profiles(tmp_path)
    assert message in str(err.value)


def test_hardware_figure_without_source_refused(tmp_path):
    text = (hardware.DATA_DIR / "h100.toml").read_text()
    (tmp_path / "h100.toml").write_text("\n".join(x for x in text.splitlines() if not x.startswith("hbm_gib = \"")))
    with pytest.raises(hardware.ProfileError, match="source: no source for hbm_gib"):
        hardware.load_profiles(tmp_path)


def test_hardware_unknown_name_lists_valid():
    with pytest.raises(KeyError, match="unknown hardware 'h300': valid are b200, b300, gb200, gb300, h100, h200"):
        hardware.get_profile("h300")


@pytest.mark.parametrize(("change", "message"), [
    ("gpus_per_node = 8.5", "gpus_per_node=8.5: must be a whole number"),
    ('hbm_gib = "141"', "hbm_gib='141': must be a number"),
    ("gpus_per_node = true", "gpus_per_node=True: must be a whole number"),
    ('instance_types = "p5en.48xlarge"', "instance_types='p5en.48xlarge': must be a list of strings"),
    ('colour = "green"', "unknown field(s) ['colour']"),
])
def test_hardware_field_types_checked_at_load(tmp_path, change, message):
    text = (hardware.DATA_DIR / "h200.toml").read_text()
    key = change.split("=")[0].strip()
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith(f"{key} =")), None)
    if at is None:
        lines.insert(0, change)
    else:
        lines[at] = change
    (tmp_path / "h200.toml").write_text("\n".join(lines))
    with pytest.raises(hardware.ProfileError, match="h200.toml: ") as err:
        hardware.load_profiles(tmp_path)
    assert message in str(err.value)


def test_hardware_non_utf8_profile_refused(tmp_path):
    (tmp_path / "h200.toml").write_bytes("name = 'h200'\ngpu_model = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(hardware.ProfileError, match="h200.toml: cannot read profile: 'utf-8' codec"):
        hardware.load_profiles(tmp_path)


@pytest.mark.parametrize(("old", "new", "message"), [
    ('bf16_gemm_min_tflops = "measured"', 'bf16_gemm_min_tflops = "guessed"',
     "provenance.bf16_gemm_min_tflops='guessed': one of measured, public, baseline"),
    ('bf16_gemm_min_tflops = "measured"', "", "provenance: bf16_gemm_min_tflops must say measured, public or baseline"),
    ('bf16_gemm_min_tflops = "measured"', 'bf16_gemm_min_tflops = "measured"\nshm_max_gib = "measured"',
     "provenance.shm_max_gib: not a threshold of this profile"),
])
def test_hardware_floor_provenance_validated_when_loaded(tmp_path, old, new, message):
    text = (hardware.DATA_DIR / "h200.toml").read_text()
    assert old in text
    (tmp_path / "h200.toml").write_text(text.replace(old, new, 1))
    with pytest.raises(hardware.ProfileError, match="h200.toml: ") as err:
        hardware.load_profiles(tmp_path)
    assert message in str(err.value)


def test_hardware_h200_floors_are_measured_the_others_public():
    assert {n: p.provenance.get("bf16_gemm_min_tflops") for n, p in PROFILES.items()} == {
        "b200": "public", "b300": "public", "gb200": "public", "gb300": "public", "h100": "public", "h200": "measured"}
