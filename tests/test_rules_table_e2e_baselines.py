"""Rule table for the per-hardware baseline bands of e2e phase times (rlcheck.e2e.baselines): which phases are slow
(above the band's upper bound, never at it), the whole line each slow phase reads as, and which bands a file may
hold (a source line per case; [low_s, high_s] with 0 <= low <= high)."""

from __future__ import annotations

import pytest

from rlcheck.e2e import baselines

BANDS = '''
[case-a]
source = "three runs on 2026-11-30"
train = [40.0, 120.0]
rollout = [0, 0]

[case-b]
source = "one run"
train = [1, 2]
'''


@pytest.fixture
def bands(tmp_path, monkeypatch):
    (tmp_path / "gpu.toml").write_text(BANDS)
    monkeypatch.setattr(baselines, "DATA_DIR", tmp_path)
    baselines.load.cache_clear()
    yield tmp_path
    baselines.load.cache_clear()


def test_load_reads_every_band_as_floats_and_leaves_the_source_out(bands):
    assert baselines.load("gpu") == {"case-a": {"train": (40.0, 120.0), "rollout": (0.0, 0.0)},
                                     "case-b": {"train": (1.0, 2.0)}}
    assert baselines.load("other-gpu") == {}


@pytest.mark.parametrize(("phase_times", "slow"), [
    ([], []),
    ([{"train": 120.0}], []),  # at the upper bound: not slow
    ([{"train": 120.01}], ["loop 0 train 120.0 s > 120.0 s (band (40.0, 120.0))"]),
    ([{"train": 10.0}], []),  # below the lower bound: fast is never flagged
    ([{"train": 121.0, "rollout": 0.04}, {"unbanded": 999.0}, {"train": 99.0, "rollout": 0.0}],
     ["loop 0 train 121.0 s > 120.0 s (band (40.0, 120.0))", "loop 0 rollout 0.0 s > 0.0 s (band (0.0, 0.0))"]),
    ([{"train": 50.0}, {"train": 130.26}, {"rollout": 3.0}],
     ["loop 1 train 130.3 s > 120.0 s (band (40.0, 120.0))", "loop 2 rollout 3.0 s > 0.0 s (band (0.0, 0.0))"]),
], ids=["no-loops", "at-bound", "just-above", "fast", "two-in-loop-0", "later-loops"])
def test_outside_names_each_phase_above_its_band(bands, phase_times, slow):
    assert baselines.outside("case-a", "gpu", phase_times) == slow


def test_outside_a_case_or_hardware_without_bands_is_never_slow(bands):
    assert baselines.outside("case-c", "gpu", [{"train": 1e9}]) == []
    assert baselines.outside("case-a", "other-gpu", [{"train": 1e9}]) == []
    assert baselines.outside("case-b", "gpu", [{"train": 2.5}]) == ["loop 0 train 2.5 s > 2.0 s (band (1.0, 2.0))"]


@pytest.mark.parametrize(("text", "error"), [
    ('[c]\ntrain = [1, 2]\n', "gpu.toml [c]: a band needs a source line"),
    ('[c]\nsource = ""\ntrain = [1, 2]\n', "gpu.toml [c]: a band needs a source line"),
    ('[c]\nsource = "s"\ntrain = [3, 2]\n', "gpu.toml [c] train=[3, 2]: [low_s, high_s] with low <= high"),
    ('[c]\nsource = "s"\ntrain = [-1, 2]\n', "gpu.toml [c] train=[-1, 2]: [low_s, high_s] with low <= high"),
    ('[c]\nsource = "s"\ntrain = [1, 2, 3]\n', "gpu.toml [c] train=[1, 2, 3]: [low_s, high_s] with low <= high"),
    ('[c]\nsource = "s"\ntrain = 2\n', "gpu.toml [c] train=2: [low_s, high_s] with low <= high"),
])
def test_load_refuses_a_band_without_a_source_or_out_of_order(bands, text, error):
    (bands / "gpu.toml").write_text(text)
    with pytest.raises(ValueError) as raised:
        baselines.load("gpu")
    assert str(raised.value) == error


def test_the_shipped_bands_load():
    baselines.load.cache_clear()
    assert all(low <= high for case in baselines.load("h200").values() for low, high in case.values())
