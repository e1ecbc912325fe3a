"""A profile's thresholds are typed: each known floor a finite number > 0 or unset, an unknown name refused naming
the allowed ones (a misspelt floor in a profile file used to be carried along and never judged)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from rlcheck.hardware import DATA_DIR, THRESHOLDS, ProfileError, Thresholds, get_profile, load_profiles


def test_every_shipped_profile_sets_its_floors_by_known_names():
    for profile in load_profiles().values():
        assert isinstance(profile.thresholds, Thresholds)
        assert set(profile.thresholds) <= set(THRESHOLDS)


@pytest.mark.parametrize("name", THRESHOLDS)
def test_each_floor_reads_back_by_name_and_attribute(name):
    floors = Thresholds.of({name: 12.5})
    assert floors.get(name) == 12.5 == getattr(floors, name) == floors[name]
    assert name in floors and list(floors) == [name] and floors.items() == [(name, 12.5)]
    assert {**floors} == {name: 12.5}
    others = [n for n in THRESHOLDS if n != name]
    assert all(floors.get(n) is None and n not in floors for n in others)
    with pytest.raises(KeyError, match="not set"):
        floors[others[0]]


@pytest.mark.parametrize("value", [0, -1.0, math.inf, -math.inf, math.nan, True, "700"])
def test_a_floor_that_is_no_positive_finite_number_is_refused(value):
    with pytest.raises(ValueError, match=r"thresholds\.shm_min_gib=.*finite number > 0"):
        Thresholds.of({"shm_min_gib": value})


@pytest.mark.parametrize("value", [1e-9, 1, 700.0])
def test_a_small_or_integer_floor_is_kept(value):
    assert Thresholds.of({"shm_min_gib": value}).shm_min_gib == value


def test_an_unknown_name_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match="unknown bf16_gemm_tflops; allowed: bf16_gemm_min_tflops"):
        Thresholds.of({"bf16_gemm_tflops": 700.0})


def test_get_of_a_name_that_is_no_threshold_is_a_bug_not_an_unset_floor():
    with pytest.raises(KeyError, match="is no threshold"):
        Thresholds().get("shm_gib")
    assert "shm_gib" not in Thresholds()


def test_replace_keeps_the_other_floors_and_refuses_unknown_names():
    floors = Thresholds.of({"bf16_gemm_min_tflops": 700.0, "shm_min_gib": 64.0})
    moved = floors.replace({"bf16_gemm_min_tflops": 650.0})
    assert moved.items() == [("bf16_gemm_min_tflops", 650.0), ("shm_min_gib", 64.0)]
    assert floors.bf16_gemm_min_tflops == 700.0
    with pytest.raises(ValueError, match="unknown"):
        floors.replace({"gemm": 1.0})


def test_a_profile_given_a_table_types_it_and_refuses_an_unknown_floor():
    h200 = get_profile("h200")
    typed = dataclasses.replace(h200, thresholds={**h200.thresholds, "shm_min_gib": 8.0})
    assert isinstance(typed.thresholds, Thresholds) and typed.thresholds.shm_min_gib == 8.0
    with pytest.raises(ValueError, match="unknown shm_gib"):
        dataclasses.replace(h200, thresholds={**h200.thresholds, "shm_gib": 8.0},
                            source={**h200.source, "shm_gib": "x"})


def test_a_profile_file_with_an_unknown_floor_is_refused_naming_file_and_name(tmp_path):
    original = (DATA_DIR / "h200.toml").read_text(encoding="utf-8")
    assert "[thresholds]" in original
    bad = original.replace("[thresholds]", "[thresholds]\nshm_gib = 8.0", 1)
    bad = bad.replace("[source]", '[source]\nshm_gib = "a typo"', 1) if "[source]" in bad else bad
    (tmp_path / "h200.toml").write_text(bad, encoding="utf-8")
    with pytest.raises(ProfileError, match=r"h200\.toml: .*unknown shm_gib"):
        load_profiles(tmp_path)
