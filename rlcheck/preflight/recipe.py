"""Recipe checks: the typed recipe (or a user's job) on the hardware profile, judged before any GPU is asked for."""

from __future__ import annotations

from rlcheck.framework import argv as framework_argv
from rlcheck.framework import live
from rlcheck.framework.detect import Installed, choose
from rlcheck.job import argv_model
from rlcheck.job.job import framework_why
from rlcheck.preflight.registry import Check, Inputs, Need
from rlcheck.probes.image import ld_preload
from rlcheck.probes.recipe import (
    architecture,
    argv_shell,
    checkpoint_save,
    context_length,
    health_wait,
    inline_secrets,
    job_shape,
    memory,
    memory_kv,
    proxy_env,
    recipe_rules,
    sample_caps,
)
from rlcheck.probes.recipe.hf_config import collect_hf_config, evaluate_hf_config
from rlcheck.probes.recipe.sglang_flags import collect_sglang_options, evaluate_sglang_flags
from rlcheck.verdict import Status, Verdict

RECIPE_AND_PROFILE = frozenset({Need.LAUNCH, Need.RECIPE, Need.PROFILE})
MODEL_AND_PROFILE = RECIPE_AND_PROFILE | {Need.MODEL}
LAUNCH = frozenset({Need.LAUNCH})


def evaluate_fits(obs: None, inputs: Inputs) -> Verdict:
    """The recipe has a shape for this hardware (e.g. glm5.2-gb300 needs GB300 nodes)."""
    if inputs.refusal:
        return Verdict(status=Status.FAIL, summary=inputs.refusal)
    if inputs.profile is None:
        return Verdict(status=Status.SKIP,
                       summary="needs a hardware profile (--hardware): found none; judging the base recipe")
    return Verdict(status=Status.PASS, summary=f"{inputs.recipe.id} is shaped for {inputs.profile.name}")


def _collect_live(inputs: Inputs) -> live.LiveParse:
    judged = inputs.judged_framework()
    cap = live.capability_of(inputs.profile.sm) if inputs.profile else None
    return live.collect_live(judged.framework, framework_argv.options_of(inputs.launch_argv()), cap)


def evaluate_framework_args(installed: Installed, inputs: Inputs) -> Verdict:
    """The argv as the judged framework's parsers read it (--framework, else importable here, else the job's own
    framework and version, else the committed schema of the recipe's framework, which a job's Recipe takes from
    the job)."""
    schema, how = choose(installed, inputs.recipe.framework, framework_why(inputs.job, inputs.recipe.framework))
    return framework_argv.evaluate(inputs.launch_argv(), schema, how)


def _meant_and_got(inputs: Inputs) -> tuple[list[str], list[str], str, str, str]:
    """(argv meant, argv the trainer gets, Ray's entrypoint string, why python never started) of job or recipe."""
    if inputs.job is None:  # rlcheck.cluster.launch submits a shlex-quoted entrypoint: argv survives intact
        argv = inputs.recipe.argv()
        return argv, argv, "", "", ""
    job = inputs.job
    return list(job.intended_argv), list(job.argv), job.entrypoint, job.shell_error, job.unseen


def evaluate_shape(obs: None, inputs: Inputs) -> Verdict:
    """The job's stated GPUs per node (a built-in recipe's placement) against the profile's nodes."""
    if inputs.job is None:
        placement = inputs.recipe.placement
        nodes = -(-placement.placement_group_gpus // placement.num_gpus_per_node)
        return job_shape.evaluate_job_shape(nodes, placement.num_gpus_per_node, inputs.profile,
                                            f"recipe {inputs.recipe.id}")
    job = inputs.job
    return job_shape.evaluate_job_shape(job.nodes, job.gpus_per_node, inputs.profile, f"job {job.source}")


CHECKS = (
    Check(id="recipe_fits_hardware", guards=("deepep-gb300-megatron",), needs=RECIPE_AND_PROFILE,
          judges="the recipe has a shape for `--hardware`", judge=evaluate_fits),
    Check(id="recipe_job_shape", guards=("placement-group-oversubscribed",), needs=LAUNCH | {Need.PROFILE},
          judges="GPUs per node the launch states (`ray start --num-gpus`, RayJob worker groups) against the profile",
          judge=evaluate_shape),
    Check(id="recipe_batch", guards=("batch-size-mismatch",), needs=frozenset({Need.LAUNCH, Need.RECIPE, Need.BATCH}),
          judges="global_batch = rollout_batch_size x n_samples // steps; global batch divides by micro batch x DP",
          judge=lambda obs, i: recipe_rules.evaluate_batch(i.recipe)),
    Check(id="recipe_layout", guards=("parallel-layout-mismatch",),
          judges="world size divisible by TP x PP x CP and by EP x expert-TP x PP; experts over EP",
          judge=lambda obs, i: recipe_rules.evaluate_layout(i.recipe)),
    Check(id="recipe_engines", guards=("engine-larger-than-node",), needs=RECIPE_AND_PROFILE,
          judges="rollout engines no wider than a node; rollout GPUs divide into engines",
          judge=lambda obs, i: recipe_rules.evaluate_engines(i.recipe, i.profile)),
    Check(id="recipe_log_levels", guards=("uvicorn-log-level",),
          judges="`--sglang-log-level[-http]` is one of critical, error, warning, info, debug, trace",
          judge=lambda obs, i: recipe_rules.evaluate_log_levels(i.recipe)),
    Check(id="recipe_cuda_device_max_connections", guards=("cuda-device-max-connections",),
          needs=RECIPE_AND_PROFILE, judges="TP or CP > 1 below sm_100 has `CUDA_DEVICE_MAX_CONNECTIONS=1`",
          judge=lambda obs, i: recipe_rules.evaluate_connections(i.recipe, i.profile)),
    Check(id="recipe_pp_split", guards=("pp-split-skip-layer",),
          needs=frozenset({Need.LAUNCH, Need.RECIPE, Need.MODEL}),
          judges="every GLM-5.2 pipeline stage starts on a computing DSA layer",
          judge=lambda obs, i: recipe_rules.evaluate_pp_split(i.recipe)),
    Check(id="recipe_sglang_flags", guards=("sglang-dead-flag",),
          judges="every `--sglang-*` flag exists in the installed SGLang (strict parse; SLIME's is lenient)",
          collect=lambda i: collect_sglang_options(),
          judge=lambda obs, i: (recipe_rules.no_engines(i.recipe, "sglang-dead-flag")
                                or evaluate_sglang_flags(i.launch_argv(), obs))),
    Check(id="recipe_framework_parse_live", guards=("framework-arg-rejected",),
          judges="the installed SLIME/Miles' own parse_args + validate_args on the argv (GPU probes answered from "
                 "the profile); SKIP where neither is importable",
          collect=_collect_live, light_collect=True, judge=lambda obs, i: live.evaluate_live(obs)),
    Check(id="recipe_framework_args", guards=("framework-arg-rejected", "sglang-dead-flag"),
          judges="the argv against the framework's argument schema (`--framework`, else installed SLIME/Miles, else "
                 "the job's own, else the recipe's; SLIME v0.2.4 by default): types, choices, unknown or dropped "
                 "options, abbreviations, options twice",
          collect=lambda i: i.judged_framework(), light_collect=True, judge=evaluate_framework_args),
    Check(id="recipe_stage_memory", guards=("pp-stage-oom",), needs=MODEL_AND_PROFILE | {Need.TRAIN_MEMORY},
          judges="training memory of the most loaded pipeline stage (bf16 weights, fp32 grads, sharded optimizer, "
                 "Megatron's activation formula for the recompute setting, fp32 logits) against 0.94 of HBM",
          moot=lambda i: recipe_rules.no_training(i.recipe, "pp-stage-oom"),
          judge=lambda obs, i: memory.evaluate_stage_memory(i.recipe, i.profile,
                                                            *argv_model.train_bounds(i.recipe.extra_args))),
    Check(id="recipe_kv_pool", guards=("kv-pool-truncation",), needs=MODEL_AND_PROFILE | {Need.ROLLOUT_MEMORY},
          judges="SGLang's KV pool (its own arithmetic: fraction x free before loading - weights, in pages) against "
                 "rollout context x concurrency; NSA fp8 over-allocation; a bf16 FAIL a quantized checkpoint would not "
                 "have is UNKNOWN until config.json gives the precision",
          moot=lambda i: recipe_rules.no_engines(i.recipe, "kv-pool-truncation"),
          collect=lambda i: collect_hf_config(i.launch_argv()) if i.job is not None else None, light_collect=True,
          judge=lambda obs, i: memory_kv.evaluate_kv_pool(i.recipe, i.profile, obs)),
    Check(id="recipe_sample_caps", guards=("cuda-oom",),
          judges="with `--use-dynamic-batch-size`, `--max-tokens-per-gpu` is set and the longest sample (prompt cap, "
                 "else `--rollout-max-context-len` - 1, + response cap; on Miles at most the context cap) fits it x CP",
          judge=lambda obs, i: sample_caps.evaluate_sample_caps(i.launch_argv(), i.recipe.id,
                                                                    i.recipe.framework)),
    Check(id="recipe_model_config", guards=("model-config-mismatch",),
          judges="`--hf-checkpoint`'s config.json against the model args: vocab, layers, hidden, heads, KV heads, "
                 "tied embeddings (UNKNOWN naming the path when it cannot be read)",
          collect=lambda i: collect_hf_config(i.launch_argv()),
          judge=lambda obs, i: evaluate_hf_config(obs, i.launch_argv(), i.recipe.id)),
    Check(id="recipe_architecture_known", guards=("architecture-unsupported",),
          judges="config.json's `architectures` native in SGLang and its config class known to the framework's "
                 "Megatron-to-HF converter (or `model_type` to mbridge with `--megatron-to-hf-mode bridge`); lists of "
                 "the installed packages, else `rlcheck/data/model_support.toml`",
          collect=lambda i: architecture.collect_architecture(i.launch_argv()),
          judge=lambda obs, i: architecture.evaluate_architecture(obs, i.launch_argv(), i.recipe.framework,
                                                                  i.recipe.id)),
    Check(id="recipe_context_length", guards=("context-length-exceeded",),
          judges="prompt cap + response cap (`--rollout-max-prompt-len`, else `--rollout-max-context-len` - 1) within "
                 "the engine's context (`--sglang-context-length`, else what SGLang derives from config.json)",
          collect=lambda i: collect_hf_config(i.launch_argv()),
          judge=lambda obs, i: (recipe_rules.no_engines(i.recipe, context_length.FAILURE_ID)
                                or context_length.evaluate_context_length(obs, i.launch_argv(), i.recipe.id))),
    Check(id="recipe_health_first_wait", guards=("rollout-health-check-killed-engine",),
          judges="with `--use-fault-tolerance`, `--rollout-health-check-first-wait` (default 0) is at least 300 s "
                 "when SGLang compiles DeepGEMM at start-up (FP8 weights, deep_gemm MoE runner, NSA indexer)",
          collect=lambda i: collect_hf_config(i.launch_argv()),
          judge=lambda obs, i: (recipe_rules.no_engines(i.recipe, health_wait.FAILURE_ID)
                                or health_wait.evaluate_health_first_wait(i.launch_argv(), i.launch_env(),
                                                                          obs.config, i.profile, i.recipe.id))),
    Check(id="recipe_ld_preload_env", guards=("tms-invalid-ld-preload",),
          judges="no LD_PRELOAD in the job's runtime env beside torch_memory_saver's own preload when offload is on",
          judge=lambda obs, i: ld_preload.evaluate_ld_preload_env(i.launch_env(), i.launch_argv(), i.recipe.id)),
    Check(id="recipe_proxy_env", guards=("rollout-engines-unreachable",),
          judges="an http(s) proxy in the job env has a no_proxy that exempts hosts (httpx ignores CIDR entries)",
          moot=lambda i: recipe_rules.no_engines(i.recipe, proxy_env.FAILURE_ID),
          judge=lambda obs, i: proxy_env.evaluate_proxy_env(i.launch_env(), i.recipe.id)),
    Check(id="recipe_argv_intact", guards=("ray-argv-loss", "model-args-glob"), needs=LAUNCH,
          judges="the trainer gets the argv the launch meant after Ray's `/bin/sh -c`; no bare glob tokens",
          judge=lambda obs, i: argv_shell.evaluate_argv_intact(*_meant_and_got(i))),
    Check(id="recipe_checkpoint_save", guards=("checkpoint-save-failed",),
          judges="`--save` + `--save-interval` with training offloaded (`--colocate`, `--offload[-train]`): the "
                 "installed train actor wakes the model before save_model (SLIME #1856 without #1888 does not), "
                 "else the judged SLIME release",
          collect=lambda i: checkpoint_save.collect_save(i.judged_framework()), light_collect=True,
          judge=lambda obs, i: checkpoint_save.evaluate_checkpoint_save(obs, i.launch_argv(), i.recipe.id)),
    Check(id="recipe_no_inline_secrets", guards=(), needs=LAUNCH,
          judges="no secret value in the trainer argv, the entrypoint's `VAR=value`/`env VAR=value` prefixes, runtime "
                 "env vars or a reused `--job-env` secret, by name (…_TOKEN…, …_API_KEY…, …SECRET…, …PASSWORD…, …_PAT, "
                 "`--wandb-key`) or by shape (hf_…, ghp_…, sk-…, AKIA…, JWT, `scheme://user:pass@`); never printed",
          judge=lambda obs, i: inline_secrets.evaluate_launch(i.launch_argv(), i.launch_env(), i.job)),
)
