"""Image checks: what is installed in the training image, judged before a GPU is allocated."""

from __future__ import annotations

from rlcheck.probes.numpy_megatron import collect_numpy_megatron, evaluate_numpy_megatron


def test_image_numpy_major(record_verdict):
    """numpy 1.x beside Megatron (numpy2-megatron)."""
    record_verdict(evaluate_numpy_megatron(collect_numpy_megatron()))
