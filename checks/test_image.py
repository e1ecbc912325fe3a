"""Image checks: what is installed in the training image, judged before a GPU is allocated."""

from __future__ import annotations

from rlcheck.catalog import installed_versions
from rlcheck.probes.image import (
    affected_packages,
    collect_arch,
    collect_mbridge,
    collect_megatron,
    evaluate_arch,
    evaluate_mbridge,
    evaluate_megatron_training,
    evaluate_versions,
)
from rlcheck.probes.numpy_megatron import collect_numpy_megatron, evaluate_numpy_megatron
from rlcheck.probes.recipe_rules import reaches_gpu_probes
from rlcheck.probes.slime_source import collect_guard, collect_kernel, evaluate_guard, evaluate_kernel


def test_image_numpy_major(record_verdict):
    """numpy 1.x beside Megatron (numpy2-megatron)."""
    record_verdict(evaluate_numpy_megatron(collect_numpy_megatron()))


def test_image_megatron_training(record_verdict):
    """megatron.training present (megatron-training-missing)."""
    record_verdict(evaluate_megatron_training(collect_megatron()))


def test_image_mbridge(record_verdict, recipe_under_check):
    """mbridge importable when the recipe converts its checkpoint with it (mbridge-missing)."""
    recipe = recipe_under_check.recipe
    record_verdict(evaluate_mbridge(recipe.model.moe is not None, recipe.id, collect_mbridge()))


def test_image_versions(record_verdict):
    """Installed stack versions against the catalogue's affected ranges."""
    record_verdict(evaluate_versions(installed_versions(affected_packages())))


def test_image_cpu_arch(record_verdict, rlcheck_context):
    """Host CPU architecture against the wheels in the image and the hardware's hosts."""
    record_verdict(evaluate_arch(collect_arch(), rlcheck_context.profile))


def test_image_driver_guard(record_verdict, recipe_under_check):
    """SLIME's driver guards Megatron's GPU probes when the recipe reaches them (driver-gpu-probe)."""
    recipe = recipe_under_check.recipe
    record_verdict(evaluate_guard(collect_guard(), reaches_gpu_probes(recipe), recipe.id))


def test_image_sparse_mla_merge(record_verdict):
    """The installed sparse-MLA backward kernel does not merge shared memory on an affected TileLang."""
    record_verdict(evaluate_kernel(collect_kernel()))
