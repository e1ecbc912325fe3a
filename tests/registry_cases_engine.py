"""Registry rows for the checks of how rollout engines start and serve: context length, health wait, LD_PRELOAD."""

from __future__ import annotations

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.recipe.hf_config import collect_hf_config
from rlcheck.recipes.recipe import with_env
from rlcheck.verdict import Status
from tests.registry_cases_field import HF_CONFIGS

_H200, _GB300 = get_profile("h200"), get_profile("gb300")
_TMS_HOOK = "/usr/local/lib/python3.12/dist-packages/torch_memory_saver_hook_mode_preload_cu12.abi3.so"
_FT = ("--use-fault-tolerance",)


def _job(*args: str, recipe: str = "qwen3-4b-colocated", env: dict[str, str] | None = None) -> Inputs:
    """A shipped recipe with args appended (the last value wins, as in argparse) and env vars set."""
    profile = _GB300 if recipe.startswith("glm") else _H200
    base = recipes.get(recipe, profile)
    built = base.replace(extra_args=(*base.extra_args, *args))
    return Inputs(recipe=with_env(built, env or {}), profile=profile)


def _hf(name: str) -> object:
    return collect_hf_config(["--hf-checkpoint", str(HF_CONFIGS / name)])


# qwen3-4b's config.json: max_position_embeddings 40960; the shipped recipe caps responses at 8192 tokens.
CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "recipe_context_length": [
        ("prompt-32768-plus-response-8192-is-40960", _job("--rollout-max-prompt-len", "32768"), _hf("qwen3-4b"),
         Status.PASS),
        ("prompt-32769-plus-response-8192-over-40960", _job("--rollout-max-prompt-len", "32769"), _hf("qwen3-4b"),
         Status.FAIL),
        ("prompt-32769-with-auto-truncate", _job("--rollout-max-prompt-len", "32769", "--sglang-allow-auto-truncate"),
         _hf("qwen3-4b"), Status.WARN),
        ("prompt-uncapped-shipped-recipe", _job(), _hf("qwen3-4b"), Status.WARN),
        ("response-40959-prompt-uncapped", _job("--rollout-max-response-len", "40959"), _hf("qwen3-4b"), Status.WARN),
        ("response-40960-prompt-uncapped", _job("--rollout-max-response-len", "40960"), _hf("qwen3-4b"), Status.FAIL),
        ("context-cap-32769-implies-prompt-32768", _job("--rollout-max-context-len", "32769"), _hf("qwen3-4b"),
         Status.PASS),
        ("context-cap-32770-implies-prompt-32769", _job("--rollout-max-context-len", "32770"), _hf("qwen3-4b"),
         Status.WARN),
        ("sglang-context-16384-prompt-8192", _job("--sglang-context-length", "16384", "--rollout-max-prompt-len",
                                                  "8192"), _hf("absent"), Status.PASS),
        ("sglang-context-16384-prompt-8193", _job("--sglang-context-length", "16384", "--rollout-max-prompt-len",
                                                  "8193"), _hf("absent"), Status.FAIL),
        ("rope-linear-x2-4096-is-8192", _job("--rollout-max-prompt-len", "4096", "--rollout-max-response-len", "4096"),
         _hf("rope-linear-x2"), Status.PASS),
        ("rope-linear-x2-8193", _job("--rollout-max-prompt-len", "4097", "--rollout-max-response-len", "4096"),
         _hf("rope-linear-x2"), Status.FAIL),
        ("config-without-context-key-is-sglang-2048", _job("--rollout-max-prompt-len", "1024"), _hf("qwen3-8b"),
         Status.FAIL),
        ("prompt-cap-not-an-int", _job("--rollout-max-prompt-len", "32k"), _hf("qwen3-4b"), Status.FAIL),
        ("checkpoint-not-mounted-here", _job("--rollout-max-prompt-len", "1024"), _hf("absent"), Status.SKIP),
        ("checkpoint-config-garbled", _job("--rollout-max-prompt-len", "1024"), _hf("broken"), Status.UNKNOWN),
    ],
    "recipe_health_first_wait": [
        ("no-fault-tolerance-shipped-recipe", _job(), _hf("absent"), Status.SKIP),
        ("fault-tolerance-bf16-default-wait", _job(*_FT), _hf("qwen3-4b"), Status.PASS),
        ("fp8-rollout-default-wait", _job(*_FT, "--sglang-quantization", "fp8"), _hf("absent"), Status.FAIL),
        ("fp8-rollout-wait-299", _job(*_FT, "--sglang-quantization", "fp8", "--rollout-health-check-first-wait",
                                      "299"), _hf("absent"), Status.FAIL),
        ("fp8-rollout-wait-300", _job(*_FT, "--sglang-quantization", "fp8", "--rollout-health-check-first-wait",
                                      "300"), _hf("absent"), Status.PASS),
        ("fp8-checkpoint-default-wait", _job(*_FT), _hf("qwen3-4b-fp8"), Status.FAIL),
        ("fp8-checkpoint-deepgemm-off", _job(*_FT, env={"SGLANG_ENABLE_JIT_DEEPGEMM": "0"}), _hf("qwen3-4b-fp8"),
         Status.PASS),
        ("glm-nsa-default-wait", _job(*_FT, recipe="glm5.2-gb300"), _hf("absent"), Status.FAIL),
        ("glm-nsa-wait-600", _job(*_FT, "--rollout-health-check-first-wait", "600", recipe="glm5.2-gb300"),
         _hf("absent"), Status.PASS),
        ("first-wait-not-a-number", _job(*_FT, "--rollout-health-check-first-wait", "5m"), _hf("absent"),
         Status.FAIL),
    ],
    "recipe_ld_preload_env": [
        ("no-ld-preload-shipped-recipe", _job(), None, Status.PASS),
        ("empty-ld-preload", _job(env={"LD_PRELOAD": ""}), None, Status.PASS),
        ("colocated-hook-in-job-env", _job(env={"LD_PRELOAD": _TMS_HOOK}), None, Status.FAIL),
        ("colocated-other-library", _job(env={"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}), None,
         Status.WARN),
        ("colocated-no-offload-rollout-hook", _job("--no-offload-rollout", env={"LD_PRELOAD": _TMS_HOOK}), None,
         Status.WARN),
        ("disaggregated-hook-offload-off", _job(recipe="qwen3-30b-a3b-disaggregated", env={"LD_PRELOAD": _TMS_HOOK}),
         None, Status.SKIP),
        ("disaggregated-hook-offload-rollout", _job("--offload-rollout", recipe="qwen3-30b-a3b-disaggregated",
                                                    env={"LD_PRELOAD": _TMS_HOOK}), None, Status.FAIL),
        ("disaggregated-hook-offload-flag", _job("--offload", recipe="qwen3-30b-a3b-disaggregated",
                                                 env={"LD_PRELOAD": _TMS_HOOK}), None, Status.FAIL),
    ],
}
