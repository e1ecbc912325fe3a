"""Image checks: what is installed in the training image, judged before a GPU is allocated."""

from __future__ import annotations

from rlcheck.catalog import installed_versions
from rlcheck.framework.detect import overlay_versions
from rlcheck.preflight.registry import Check, Inputs, Need
from rlcheck.probes.image import image, slime_source, torch_pg
from rlcheck.probes.image.numpy_megatron import collect_numpy_megatron, evaluate_numpy_megatron
from rlcheck.probes.recipe import recipe_rules


def _versions(inputs: Inputs) -> dict[str, str | None]:
    """Installed versions; SLIME/Miles as judged (--framework, or a checkout's tag, which has no metadata)."""
    return overlay_versions(installed_versions(image.affected_packages()), inputs.judged_framework())


def _mbridge(inputs: Inputs) -> image.MbridgeObservation:
    """mbridge importable, and the SLIME judged (--framework, metadata or a checkout's tag) for its version rule."""
    judged = inputs.judged_framework()
    slime = (judged.version or ("main" if judged.main else "unknown")) if judged.framework == "slime" else None
    return image.MbridgeObservation(has_mbridge=image.collect_mbridge().has_mbridge, slime=slime)


CHECKS = (
    Check(id="image_numpy_major", guards=("numpy2-megatron",), needs=frozenset(),
          judges="numpy 2 beside a Megatron that breaks under it (before 0.16: `np.product` at checkpoint save)",
          collect=lambda i: collect_numpy_megatron(), judge=lambda obs, i: evaluate_numpy_megatron(obs)),
    Check(id="image_megatron_training", guards=("megatron-training-missing",), needs=frozenset(),
          judges="`megatron.training.arguments` importable (wheels ship it from 0.17)",
          collect=lambda i: image.collect_megatron(), judge=lambda obs, i: image.evaluate_megatron_training(obs)),
    Check(id="image_mbridge", guards=("mbridge-missing",),
          judges="mbridge importable when the recipe is MoE (its checkpoint is converted); SKIP on SLIME >= 0.3.1 and "
                 "main, UNKNOWN on a SLIME of unknown release",
          collect=_mbridge,
          judge=lambda obs, i: image.evaluate_mbridge(i.recipe.model.moe is not None, i.recipe.id, obs.has_mbridge,
                                                      obs.slime)),
    Check(id="image_versions", guards=(), needs=frozenset(),
          judges="installed versions inside a known failure's affected range (WARN, with the check that guards each)",
          collect=_versions, judge=lambda obs, i: image.evaluate_versions(obs, i.guarded_by), advisory=True,
          advisory_reason="a version inside an affected range is a hint: the check named beside it FAILs on the fault"),
    Check(id="image_cpu_arch", guards=(), needs=frozenset({Need.PROFILE}),
          judges="wheels built for another CPU; an x86_64 image for aarch64 (GB200/GB300) hosts",
          collect=lambda i: image.collect_arch(), judge=lambda obs, i: image.evaluate_arch(obs, i.profile)),
    Check(id="image_driver_guard", guards=("driver-gpu-probe",),
          judges="the recipe reaches Megatron's GPU probes and nothing guards them on the GPU-less driver",
          collect=lambda i: slime_source.collect_guard(),
          judge=lambda obs, i: slime_source.evaluate_guard(obs, recipe_rules.reaches_gpu_probes(i.recipe),
                                                           i.recipe.id)),
    Check(id="image_sparse_mla_merge", guards=("sparse-mla-bwd-nan",), needs=frozenset(),
          judges="the installed SLIME/Miles sparse-MLA kernel sets TileLang's aggressive merge on (read with `ast`)",
          collect=lambda i: slime_source.collect_kernel(), judge=lambda obs, i: slime_source.evaluate_kernel(obs)),
    Check(id="image_torch_pg_options", guards=("torch-pg-options-renamed",), needs=frozenset(),
          judges="SLIME/Miles weight-sync group picks torch's option name by a string version compare (torch >= 2.10)",
          collect=lambda i: torch_pg.collect_pg(), judge=lambda obs, i: torch_pg.evaluate_pg(obs)),
)
