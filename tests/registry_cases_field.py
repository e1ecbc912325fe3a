"""Registry rows for the checks of the field catalogue (issue: failures SLIME and Miles users hit)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.image.torch_pg import PgObservation
from rlcheck.probes.recipe.hf_config import collect_hf_config
from rlcheck.recipes.recipe import with_env
from rlcheck.verdict import Status

_H200 = get_profile("h200")
_INPUTS = Inputs(recipe=recipes.get("qwen3-4b-colocated", _H200), profile=_H200)
_SLIME = "site-packages/slime/utils/distributed_utils.py"


HF_CONFIGS = Path(__file__).parent / "data" / "hf_config"
"""Small config.json files written for these tests with the real numbers of each model's published config."""


def _extra(*args: str, recipe: str = "qwen3-4b-colocated") -> Inputs:
    base = recipes.get(recipe, _H200)
    return Inputs(recipe=base.replace(extra_args=(*base.extra_args, *args)), profile=_H200)


def _fixed_micro_batches() -> Inputs:
    base = _INPUTS.recipe
    return Inputs(recipe=base.replace(rollout=dataclasses.replace(base.rollout, max_tokens_per_gpu=None)),
                  profile=_H200)


def _hf(name: str) -> object:
    return collect_hf_config(["--hf-checkpoint", str(HF_CONFIGS / name)])


def _proxied(no_proxy: str) -> Inputs:
    recipe = with_env(_INPUTS.recipe, {"https_proxy": "http://127.0.0.1:3128", "no_proxy": no_proxy})
    return Inputs(recipe=recipe, profile=_H200)


CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "image_torch_pg_options": [
        ("semantic-compare-torch-2.10", _INPUTS, PgObservation(source=_SLIME, string_compare=False, torch="2.10.0"),
         Status.PASS),
        ("string-compare-torch-2.10", _INPUTS, PgObservation(source=_SLIME, string_compare=True, torch="2.10.0"),
         Status.FAIL),
        ("string-compare-torch-2.9.1", _INPUTS, PgObservation(source=_SLIME, string_compare=True, torch="2.9.1"),
         Status.WARN),
    ],
    "recipe_proxy_env": [
        ("no-proxy-in-env", _INPUTS, None, Status.PASS),
        ("proxy-with-cidr-no-proxy", _proxied("10.0.0.0/8"), None, Status.FAIL),
        ("proxy-with-host-no-proxy", _proxied("localhost,127.0.0.1"), None, Status.WARN),
    ],
    "recipe_sample_caps": [
        # the shipped recipe's response cap is 8192: context - 1 + 8192 against a 16384-token cap
        ("context-cap-prompt-filter-plus-response-fits",
         _extra("--max-tokens-per-gpu", "16384", "--rollout-max-context-len", "8193"), None, Status.PASS),
        ("context-cap-prompt-filter-plus-response-one-over", _extra("--max-tokens-per-gpu", "16384",
                                                                    "--rollout-max-context-len", "8194"), None,
         Status.WARN),
        ("prompt-uncapped-shipped-recipe", _INPUTS, None, Status.WARN),
        ("token-cap-not-an-int", _extra("--max-tokens-per-gpu", "8k"), None, Status.FAIL),
        ("fixed-micro-batches", _fixed_micro_batches(), None, Status.SKIP),
    ],
    "recipe_model_config": [
        ("qwen3-4b-config-and-args", _INPUTS, _hf("qwen3-4b"), Status.PASS),
        ("qwen3-8b-checkpoint-qwen3-4b-args", _INPUTS, _hf("qwen3-8b"), Status.FAIL),
        ("qwen3-30b-a3b-config-and-args", Inputs(recipe=recipes.get("qwen3-30b-a3b-disaggregated", _H200),
                                                 profile=_H200), _hf("qwen3-30b-a3b"), Status.PASS),
        ("checkpoint-not-mounted-here", _INPUTS, _hf("absent"), Status.SKIP),
        ("checkpoint-config-garbled", _INPUTS, _hf("broken"), Status.UNKNOWN),
        ("checkpoint-without-config", _INPUTS, _hf("no-config"), Status.UNKNOWN),
    ],
}
