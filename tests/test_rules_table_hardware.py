"""Rule table for the hardware profiles (rlcheck.hardware): which GPU names each profile claims (B-series against
GB-series, MIG slices, names no profile knows), what a floor below it means (FAIL where measured or a cluster's
baseline, WARN where only a public figure), the sm number the checks compare, and every way a profile file or a
profile built in code is refused, with the whole message."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

from rlcheck import hardware
from rlcheck.hardware import Alternative, HardwareProfile, ProfileError, Thresholds

PROFILES = hardware.load_profiles()
H200 = PROFILES["h200"]


@pytest.mark.parametrize(("gpu_name", "profiles"), [
    ("NVIDIA H100 80GB HBM3", ["h100"]),
    ("NVIDIA H100 NVL", ["h100"]),
    ("NVIDIA H200", ["h200"]),
    ("NVIDIA H200 NVL", ["h200"]),
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", ["h100"]),  # a MIG slice names its parent GPU
    ("NVIDIA B200", ["b200"]),
    ("NVIDIA B300 SXM6 AC", ["b300"]),
    ("NVIDIA GB200", ["gb200"]),  # a Grace Blackwell is no B200
    ("NVIDIA GB300", ["gb300"]),
    ("NVIDIA A100-SXM4-80GB", []),
    ("NVIDIA H20", []),
    ("NVIDIA H2000", []),
    ("NVIDIA RTX PRO 6000 Blackwell", []),
    ("NVIDIA XB200", []),
    ("", []),
])
def test_each_gpu_name_is_claimed_by_the_profiles_of_its_model_only(gpu_name, profiles):
    assert [name for name, p in PROFILES.items() if p.matches_gpu_name(gpu_name)] == profiles


def test_a_profile_with_several_patterns_claims_a_name_any_of_them_matches():
    both = dataclasses.replace(H200, gpu_name_patterns=(r"\bH200\b", r"\bGH200\b"))
    assert both.matches_gpu_name("NVIDIA GH200 480GB") and both.matches_gpu_name("NVIDIA H200")
    assert not dataclasses.replace(H200, gpu_name_patterns=()).matches_gpu_name("NVIDIA H200")


@pytest.mark.parametrize(("capability", "sm"), [("9.0", 90), ("10.0", 100), ("10.3", 103), ("12.1", 121)])
def test_the_sm_number_is_major_ten_times_plus_minor(capability, sm):
    assert dataclasses.replace(H200, compute_capability=capability).sm == sm


def test_the_shipped_profiles_sm_numbers():
    assert {n: p.sm for n, p in PROFILES.items()} == {"b200": 100, "b300": 103, "gb200": 100, "gb300": 103,
                                                      "h100": 90, "h200": 90}


@pytest.mark.parametrize(("provenance", "measured"), [
    ({"bf16_gemm_min_tflops": "measured"}, True),
    ({"bf16_gemm_min_tflops": "baseline"}, True),
    ({"bf16_gemm_min_tflops": "public"}, False),
])
def test_below_a_public_floor_is_warn_below_a_measured_or_baseline_one_fail(provenance, measured):
    profile = dataclasses.replace(H200, provenance={**H200.provenance, **provenance})
    assert profile.floor_measured("bf16_gemm_min_tflops") is measured
    assert profile.floor_measured("nccl_allreduce_min_busbw_gbps") is True  # still measured


def test_a_floor_without_a_provenance_entry_is_measured():
    assert H200.floor_measured("shm_min_gib") is True
    assert PROFILES["gb300"].floor_measured("shm_min_gib") is True
    assert PROFILES["gb300"].floor_measured("bf16_gemm_min_tflops") is False


def _refused(**changes) -> str:
    with pytest.raises(ValueError) as err:
        dataclasses.replace(H200, **changes)
    return str(err.value)


@pytest.mark.parametrize(("changes", "message"), [
    ({"compute_capability": "9"}, "compute_capability='9': expected MAJOR.MINOR such as '9.0' or '10.3'"),
    ({"compute_capability": "9.0.1"}, "compute_capability='9.0.1': expected MAJOR.MINOR such as '9.0' or '10.3'"),
    ({"compute_capability": "sm_90"}, "compute_capability='sm_90': expected MAJOR.MINOR such as '9.0' or '10.3'"),
    ({"cpu_arch": "arm64"}, "cpu_arch='arm64': one of x86_64, aarch64"),
    ({"hbm_gib": 0}, "hbm_gib=0: must be > 0"),
    ({"hbm_gib": -1.5}, "hbm_gib=-1.5: must be > 0"),
    ({"gpus_per_node": 0}, "gpus_per_node=0: must be > 0"),
    ({"nvlink_domain_gpus": 0}, "nvlink_domain_gpus=0: must be > 0"),
    ({"efa_interfaces_per_node": -1}, "efa_interfaces_per_node=-1: must be >= 0"),
    ({"source": {k: v for k, v in H200.source.items() if k not in ("hbm_gib", "cpu_arch")}},
     "source: no source for hbm_gib, cpu_arch (every figure needs one)"),
    ({"source": {**H200.source, "gpu_model": ""}}, "source: no source for gpu_model (every figure needs one)"),
    ({"source": {k: v for k, v in H200.source.items() if k != "shm_min_gib"}},
     "source: no source for shm_min_gib (every figure needs one)"),
    ({"provenance": {"bf16_gemm_min_tflops": "measured"}},
     "provenance: nccl_allreduce_min_busbw_gbps must say measured, public or baseline"),
    ({"provenance": {}}, "provenance: bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps must say measured, "
                         "public or baseline"),
    ({"provenance": {**H200.provenance, "bf16_gemm_min_tflops": "guessed"}},
     "provenance.bf16_gemm_min_tflops='guessed': one of measured, public, baseline"),
    ({"provenance": {**H200.provenance, "nccl_pair_min_busbw_gbps": "measured"}},
     "provenance.nccl_pair_min_busbw_gbps: not a threshold of this profile (bf16_gemm_min_tflops, "
     "nccl_allreduce_min_busbw_gbps, shm_min_gib)"),
    ({"thresholds": {"shm_gib": 1.0}}, "thresholds: unknown shm_gib; allowed: bf16_gemm_min_tflops, "
                                       "nccl_allreduce_min_busbw_gbps, nccl_pair_min_busbw_gbps, shm_min_gib"),
])
def test_a_profile_that_breaks_a_rule_is_refused_naming_the_field(changes, message):
    assert _refused(**changes) == message


def test_a_gpu_name_pattern_that_is_no_regex_is_refused():
    with pytest.raises(re.error):
        dataclasses.replace(H200, gpu_name_patterns=(r"\bH200\b", "H200("))


@pytest.mark.parametrize("changes", [
    {"compute_capability": "10.3"}, {"compute_capability": "12.10"}, {"cpu_arch": "aarch64"},
    {"hbm_gib": 0.5}, {"gpus_per_node": 1}, {"nvlink_domain_gpus": 1}, {"efa_interfaces_per_node": 0},
    {"thresholds": {"shm_min_gib": 1.0}, "provenance": {}},  # a floor that is no rate needs no provenance
    {"provenance": {**H200.provenance, "shm_min_gib": "public"}},
])
def test_a_profile_on_the_edge_of_each_rule_is_built(changes):
    profile = dataclasses.replace(H200, **changes)
    assert {k: getattr(profile, k) for k in changes if k != "thresholds"} == \
        {k: v for k, v in changes.items() if k != "thresholds"}


def test_a_profile_given_a_table_types_its_thresholds():
    profile = dataclasses.replace(H200, thresholds={"shm_min_gib": 2.0}, provenance={})
    assert profile.thresholds == Thresholds(shm_min_gib=2.0)


@pytest.mark.parametrize(("table", "message"), [
    ({"shm_min_gib": 0}, "thresholds.shm_min_gib=0: must be a finite number > 0"),
    ({"bf16_gemm_min_tflops": -0.1}, "thresholds.bf16_gemm_min_tflops=-0.1: must be a finite number > 0"),
    ({"nccl_pair_min_busbw_gbps": math.inf}, "thresholds.nccl_pair_min_busbw_gbps=inf: must be a finite number > 0"),
    ({"shm_min_gib": math.nan}, "thresholds.shm_min_gib=nan: must be a finite number > 0"),
    ({"shm_min_gib": False}, "thresholds.shm_min_gib=False: must be a finite number > 0"),
    ({"shm_min_gib": "8"}, "thresholds.shm_min_gib='8': must be a finite number > 0"),
    ({"zeta": 1.0, "alpha": 2.0}, "thresholds: unknown alpha, zeta; allowed: bf16_gemm_min_tflops, "
                                  "nccl_allreduce_min_busbw_gbps, nccl_pair_min_busbw_gbps, shm_min_gib"),
])
def test_a_floor_that_breaks_a_rule_is_refused_whole(table, message):
    with pytest.raises(ValueError) as err:
        Thresholds.of(table)
    assert str(err.value) == message


def test_floors_read_in_their_fixed_order_whatever_order_they_were_given_in():
    floors = Thresholds.of({"shm_min_gib": 1.0, "nccl_pair_min_busbw_gbps": 3, "bf16_gemm_min_tflops": 2.0})
    assert floors.items() == [("bf16_gemm_min_tflops", 2.0), ("nccl_pair_min_busbw_gbps", 3),
                              ("shm_min_gib", 1.0)]
    assert floors.keys() == list(floors) == ["bf16_gemm_min_tflops", "nccl_pair_min_busbw_gbps", "shm_min_gib"]
    assert Thresholds.of(floors) is floors
    assert Thresholds().items() == [] and list(Thresholds()) == []


def test_a_floor_read_by_a_name_that_is_no_threshold_or_not_set():
    floors = Thresholds(shm_min_gib=1e-9)
    assert floors["shm_min_gib"] == 1e-9 and floors.get("bf16_gemm_min_tflops") is None
    with pytest.raises(KeyError) as err:
        floors.get("shm_gib")
    assert err.value.args[0] == ("'shm_gib' is no threshold: one of bf16_gemm_min_tflops, "
                                 "nccl_allreduce_min_busbw_gbps, nccl_pair_min_busbw_gbps, shm_min_gib")
    with pytest.raises(KeyError) as err:
        floors["bf16_gemm_min_tflops"]
    assert err.value.args[0] == "bf16_gemm_min_tflops: not set in this profile"
    assert ("shm_min_gib" in floors, "bf16_gemm_min_tflops" in floors, "shm_gib" in floors, 3 in floors) == \
        (True, False, False, False)


def test_a_baseline_replaces_some_floors_and_keeps_the_others():
    floors = Thresholds(bf16_gemm_min_tflops=700.0, shm_min_gib=10.0)
    assert floors.replace({"bf16_gemm_min_tflops": 650.0, "nccl_pair_min_busbw_gbps": 20.0}) == Thresholds(
        bf16_gemm_min_tflops=650.0, nccl_pair_min_busbw_gbps=20.0, shm_min_gib=10.0)
    with pytest.raises(ValueError, match="^thresholds: unknown gemm; allowed"):
        floors.replace({"gemm": 1.0})


def _write(tmp_path, text: str, name: str = "h200"):
    (tmp_path / f"{name}.toml").write_text(text, encoding="utf-8")
    return tmp_path


H200_TEXT = (hardware.DATA_DIR / "h200.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(("text", "message"), [
    ("name = ", "cannot read profile: "),
    (H200_TEXT.replace('cpu_arch = "x86_64"\n', ""), "missing field(s) ['cpu_arch']"),
    (H200_TEXT + '\n[[alternatives]]\nfield = "hbm_gib"\nvalue = 140.4\n', "missing field(s) ['source']"),
    (H200_TEXT + '\n[[alternatives]]\nfield = "hbm_gib"\nvalue = "140"\nsource = "x"\n', "value='140'"),
    (H200_TEXT.replace('name = "h200"', 'name = "h300"'), "name='h300' must equal the file name 'h200'"),
    (H200_TEXT.replace('compute_capability = "9.0"', 'compute_capability = "9"'), "compute_capability='9'"),
    (H200_TEXT.replace(r"gpu_name_patterns = ['\bH200\b']", "gpu_name_patterns = ['H200(']"),
     "missing ), unterminated subpattern"),
    (H200_TEXT.replace("hbm_gib = 139.8", "hbm_gib = 139.8\ncolour = 1"), "unknown field(s) ['colour']"),
])
def test_a_profile_file_that_breaks_a_rule_is_refused_naming_the_file(tmp_path, text, message):
    with pytest.raises(ProfileError) as err:
        hardware.load_profiles(_write(tmp_path, text))
    assert str(err.value).startswith(f"{tmp_path / 'h200.toml'}: ") and message in str(err.value)


def test_a_profile_path_that_cannot_be_read_is_refused_naming_it(tmp_path):
    (tmp_path / "h200.toml").mkdir()
    with pytest.raises(ProfileError, match=r"h200\.toml: cannot read profile: \[Errno 21\] Is a directory"):
        hardware.load_profiles(tmp_path)


def test_a_profile_file_reads_as_typed_fields_with_its_alternatives(tmp_path):
    text = H200_TEXT + ('\n[[alternatives]]\nfield = "hbm_gib"\nvalue = 140.4\nsource = "nvidia-smi"\n'
                        '\n[[alternatives]]\nfield = "hbm_gib"\nvalue = 131\nsource = "datasheet"\n')
    profile = hardware.load_profiles(_write(tmp_path, text))["h200"]
    assert profile == dataclasses.replace(H200, alternatives=(
        Alternative(field="hbm_gib", value=140.4, source="nvidia-smi"),
        Alternative(field="hbm_gib", value=131, source="datasheet")))
    assert profile.gpu_name_patterns == (r"\bH200\b",) and profile.instance_types == ("p5en.48xlarge",
                                                                                      "ml.p5en.48xlarge")


def test_a_profile_file_without_the_optional_tables_has_none(tmp_path):
    text = H200_TEXT.split("\n[thresholds]")[0] + "\n[source]" + H200_TEXT.split("[source]")[1]
    text = "\n".join(line for line in text.splitlines() if not line.startswith(
        ("shm_min_gib", "bf16_gemm_min_tflops", "nccl_allreduce_min_busbw_gbps")))
    profile = hardware.load_profiles(_write(tmp_path, text))["h200"]
    assert (profile.thresholds, profile.provenance, profile.alternatives) == (Thresholds(), {}, ())


def test_profiles_load_by_file_name_in_order_and_from_the_shipped_folder_by_default(tmp_path):
    _write(tmp_path, H200_TEXT)
    _write(tmp_path, (hardware.DATA_DIR / "b200.toml").read_text(encoding="utf-8"), "b200")
    (tmp_path / "notes.txt").write_text("not a profile", encoding="utf-8")
    assert list(hardware.load_profiles(tmp_path)) == ["b200", "h200"]
    assert list(hardware.load_profiles()) == ["b200", "b300", "gb200", "gb300", "h100", "h200"]
    assert hardware.load_profiles() is hardware.load_profiles(hardware.DATA_DIR)


@pytest.mark.parametrize("name", ["h300", "H200", "auto", "none", ""])
def test_an_unknown_hardware_name_is_refused_listing_the_valid_ones(name):
    with pytest.raises(KeyError) as err:
        hardware.get_profile(name)
    assert err.value.args[0] == f"unknown hardware {name!r}: valid are b200, b300, gb200, gb300, h100, h200, auto, none"


@pytest.mark.parametrize("name", list(PROFILES))
def test_a_known_hardware_name_gives_its_profile(name):
    assert hardware.get_profile(name) is PROFILES[name] and PROFILES[name].name == name


def test_a_profile_is_a_frozen_record():
    with pytest.raises(dataclasses.FrozenInstanceError):
        H200.hbm_gib = 1.0  # type: ignore[misc]
    assert isinstance(HardwareProfile.__dataclass_fields__["thresholds"].default_factory(), Thresholds)


def test_a_profile_file_reads_as_utf8_whatever_the_locales_codec(tmp_path, monkeypatch):
    import io
    # a Latin-1 locale: text opened without an encoding would decode with it
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    text = H200_TEXT.replace('gpu_model = "NVIDIA H200 141GB HBM3e (SXM)"', 'gpu_model = "NVIDIA H200 (Hopper, café)"')
    assert hardware.load_profiles(_write(tmp_path, text))["h200"].gpu_model == "NVIDIA H200 (Hopper, café)"
