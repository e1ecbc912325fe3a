"""CPU checks of the kernel package: imports without TileLang, the fp32 reference against a
hand-computed case, and the pure pieces (configs, inputs, metrics, bisect, known issues)."""

from __future__ import annotations

import importlib
import math
import sys

import pytest
import torch

from kernels.bisect import bisect, render
from kernels.config import MlaShape, PassConfig, padded_heads
from kernels.inputs import PADDING_PATTERNS, live_blocks, make_indices
from kernels.known_issues import config_triggers_merge_miscompile, tilelang_in_affected_range
from kernels.metrics import compare
from kernels.outcome import Outcome
from kernels.reference import reference_backward, reference_forward

KERNEL_MODULES = (
    "kernels.build",
    "kernels.sparse_mla_fwd",
    "kernels.sparse_mla_bwd",
    "kernels.checks",
    "kernels.variants",
    "kernels.precompile",
    "kernels.bisect",
    "kernels.bisect_target",
    "kernels.smem_offsets",
)


@pytest.mark.parametrize("module", KERNEL_MODULES)
def test_kernels_module_imports_without_tilelang(module: str) -> None:
    had_tilelang = "tilelang" in sys.modules
    importlib.import_module(module)
    assert had_tilelang or "tilelang" not in sys.modules, f"{module} imported tilelang at import time"


def _hand_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Two queries over two KV rows (dim 2, value dim 1, scale 1); the second query is all padding."""
    log3 = math.log(3.0)
    q = torch.tensor([[1.0, 0.0], [0.5, 0.5]]).view(1, 2, 1, 2)
    kv = torch.tensor([[0.0, 5.0], [log3, 7.0]]).view(1, 2, 1, 2)
    indices = torch.tensor([[0, 1, -1], [-1, -1, -1]], dtype=torch.int32).view(1, 2, 1, 3)
    return q, kv, indices


def test_reference_forward_matches_hand_computed_case() -> None:
    q, kv, indices = _hand_case()
    out, lse = reference_forward(q, kv, indices, sm_scale=1.0, dim_v=1)
    log3 = math.log(3.0)
    # scores 0 and ln 3 -> softmax 1/4, 3/4; values 0 and ln 3.
    assert out[0, 0, 0, 0].item() == pytest.approx(0.75 * log3, rel=1e-6)
    assert lse[0, 0, 0].item() == pytest.approx(math.log(4.0), rel=1e-6)
    assert out[0, 1].abs().max().item() == 0.0
    assert math.isinf(lse[0, 1, 0].item()) and lse[0, 1, 0].item() < 0


def test_reference_backward_matches_hand_computed_case() -> None:
    q, kv, indices = _hand_case()
    grads = reference_backward(q, kv, indices, torch.ones(1, 2, 1, 1), sm_scale=1.0, dim_v=1)
    c = 0.1875 * math.log(3.0)  # p_j (v_j - out) = -c for row 0, +c for row 1
    expected_dq = torch.tensor([[c * math.log(3.0), 2 * c], [0.0, 0.0]]).view(1, 2, 1, 2)
    expected_dkv = torch.tensor([[0.25 - c, 0.0], [0.75 + c, 0.0]]).view(1, 2, 1, 2)
    torch.testing.assert_close(grads.dq, expected_dq, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(grads.dkv, expected_dkv, rtol=1e-6, atol=1e-7)


def test_reference_chunking_does_not_change_results() -> None:
    shape = MlaShape(seq_len=24, seq_len_kv=40, heads=3, topk=64)
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 24, 3, 16, generator=gen)
    kv = torch.randn(1, 40, 1, 16, generator=gen)
    indices = make_indices(shape, "causal", seed=1, device="cpu")
    grad_out = torch.randn(1, 24, 3, 8, generator=gen)
    whole = reference_backward(q, kv, indices, grad_out, dim_v=8)
    chunked = reference_backward(q, kv, indices, grad_out, dim_v=8, chunk_bytes=64 * 16 * 4 * 5)
    torch.testing.assert_close(chunked.dq, whole.dq)
    torch.testing.assert_close(chunked.dkv, whole.dkv)


@pytest.mark.parametrize("padding", PADDING_PATTERNS)
def test_make_indices_are_distinct_and_in_range(padding: str) -> None:
    shape = MlaShape(seq_len=32, seq_len_kv=200, heads=16, topk=128)
    indices = make_indices(shape, padding, seed=3, device="cpu")[0, :, 0]
    for row, position in zip(indices, range(shape.seq_len), strict=True):
        valid = row[row >= 0]
        assert valid.unique().numel() == valid.numel()
        limits = {"causal": position + shape.seq_len_kv - shape.seq_len, "prefix": max(position - 1, 0)}
        limit = limits.get(padding, shape.seq_len_kv - 1)
        assert int(valid.max()) <= limit if valid.numel() else True
    if padding == "empty_rows":
        assert bool((indices[3] == -1).all())


def test_live_blocks_counts_blocks_up_to_last_valid_slot() -> None:
    indices = torch.tensor([[5, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, 7], [1, 2, -1, 3]], dtype=torch.int32)
    assert live_blocks(indices.view(1, 4, 1, 4), block=2).tolist() == [[1, 0, 2, 2]]


def test_pass_config_label_round_trips_and_rejects_bad_values() -> None:
    config = PassConfig(aggressive_merge=True, warp_specialized=False, num_stages=1, tma_lower=False)
    assert PassConfig.parse(config.label()) == config
    assert config.tilelang_pass_configs()["tl.enable_aggressive_shared_memory_merge"] is True
    with pytest.raises(ValueError, match="num_stages=7"):
        PassConfig(num_stages=7)
    with pytest.raises(ValueError, match="key='merg'"):
        PassConfig.parse("merg=on")


@pytest.mark.parametrize(("heads", "padded"), [(1, 16), (8, 16), (16, 16), (24, 32), (64, 64)])
def test_padded_heads(heads: int, padded: int) -> None:
    assert padded_heads(heads) == padded


def test_compare_flags_nonfinite_and_nonzero_empty_rows() -> None:
    ref = torch.zeros(1, 3, 4)
    ref[0, 0] = 1.0
    assert compare("x", ref.clone(), ref).ok()
    with_nan = ref.clone()
    with_nan[0, 0, 0] = float("nan")
    assert compare("x", with_nan, ref).nonfinite_fraction == pytest.approx(1 / 12)
    leaked = ref.clone()
    leaked[0, 2, 1] = 1e-3
    assert compare("x", leaked, ref).nonzero_in_zero_rows == 1


def _fake_miscompiled_kernel(config: PassConfig) -> Outcome:
    """Stands in for a GPU run: fails exactly where the TileLang 0.1.9 merge bug does."""
    bad = config_triggers_merge_miscompile(config)
    return Outcome(bad=bad, detail="dq nonfinite 98%" if bad else "clean")


def test_bisect_names_every_single_curing_flip() -> None:
    base = PassConfig(aggressive_merge=True, warp_specialized=False, num_stages=0)
    report = bisect(_fake_miscompiled_kernel, base)
    cures = [trial.flips for trial in report.minimal_cures()]
    assert cures == [("aggressive_merge",), ("warp_specialized",), ("num_stages",)]
    assert len(report.trials) == 4 + 6
    text = render(report)
    assert "curing flips (minimal): merge=off; ws=on; stages=1" in text


def test_bisect_stops_when_base_config_is_clean() -> None:
    report = bisect(_fake_miscompiled_kernel, PassConfig())
    assert report.trials == ()
    assert "nothing to bisect" in render(report)


# Measured on an H200 with our kernel (0.1.9, 0.1.10 NaN; 0.1.11, 0.1.15 clean); 0.1.8 predates the
# faulty heuristic (TileLang history). The catalogue's range must agree with every point.
@pytest.mark.parametrize(
    ("version", "affected"),
    [
        ("0.1.8", False),
        ("0.1.9", True),
        ("0.1.10", True),
        ("0.1.9+cu128.git1a2b3c", True),
        ("0.1.10.dev5", True),
        ("0.1.11", False),
        ("0.1.15", False),
    ],
)
def test_catalogue_affected_range_matches_measurement(version: str, affected: bool) -> None:
    assert tilelang_in_affected_range(version) is affected
