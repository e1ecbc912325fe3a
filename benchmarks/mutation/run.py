"""Mutation score of rlcheck's judges with mutmut: seeded bugs the self-tests must turn red.

mutmut (3.x) was chosen because it is maintained, runs plain pytest, runs for each mutant only the tests
that reach the mutated function (so a module's run takes minutes on 2 cores, not hours) and lists each
survivor as a diff (`mutmut show`). It is not part of the reference stack: this command installs it into
.sidecar/mutmut (needs the package registry) and works on a copy of the checkout under .mutation/.

Usage: python -m benchmarks.mutation.run [TARGET ...]   (TARGET: a key of TARGETS; default: all)
The result (killed, survived, score per target, every survivor's mutant name) goes to
benchmarks/results/mutation.json (or --result NAME) with the command, machine and date; each survivor written
down as equivalent in benchmarks/mutation/equivalent.py is listed with its reason, every other one as unexplained.

On a machine without the package registry (the GPU device, whose 16 cores run a module in minutes), unpack a
--target install of mutmut and the self-tests' packages and name it: RLCHECK_MUTMUT_SITE=DIR python -m
benchmarks.mutation.run ... (the tree need not be a git checkout there: the files the tests need are copied).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks import results_file
from benchmarks.mutation.equivalent import EQUIVALENT

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".mutation"
TOOL = Path(os.environ.get("RLCHECK_MUTMUT_SITE") or ROOT / ".sidecar" / "mutmut")
MUTMUT = "mutmut==3.8.1"
# target -> (module to mutate, the self-tests that judge it, by file name: each is found anywhere under tests/, so a
# test file moved into a wing's folder (tests/probes/<wing>/) stays in its targets)
TARGETS = {
    "recipe_rules": ("rlcheck/probes/recipe/recipe_rules.py",
                     ["test_rules_recipe.py", "test_probe_recipe_rules.py", "test_registry.py",
                      "test_rules_table_recipe.py", "test_probe_pp_split.py", "test_rules_table_debug_modes.py"]),
    "node_evaluate": ("rlcheck/probes/cluster/node_evaluate.py",
                      ["test_rules_image_node.py", "test_probe_node.py", "test_registry.py",
                       "test_rules_table_node.py"]),
    "image": ("rlcheck/probes/image/image.py",
              ["test_rules_image_node.py", "test_probe_image.py", "test_registry.py",
               "test_rules_table_image.py"]),
    "memory": ("rlcheck/probes/recipe/memory.py", ["test_probe_memory.py", "test_rules_table_memory.py",
                                                   "test_rules_table_debug_modes.py"]),
    "memory_kv": ("rlcheck/probes/recipe/memory_kv.py",
                  ["test_probe_memory_kv.py", "test_rules_table_memory.py", "test_rules_table_debug_modes.py"]),
    "memory_params": ("rlcheck/probes/recipe/memory_params.py",
                      ["test_probe_memory.py", "test_probe_memory_kv.py",
                       "test_rules_table_memory.py", "test_rules_table_memory_params.py"]),
    "sample_caps": ("rlcheck/probes/recipe/sample_caps.py",
                    ["test_rules_table_sample_caps.py", "test_probe_field_caps.py",
                     "test_rules_table_debug_modes.py"]),
    "gpu_health_judges": ("rlcheck/probes/cluster/node_health.py",  # the judges of gpu_health.py's readings
                          ["test_probe_gpu_health.py", "test_rules_table_gpu_health.py"]),
    "payload": ("rlcheck/reward/payload.py", ["test_reward_payload.py", "test_rules_table_payload.py"]),
    "verdict_contract": ("rlcheck/plugin/report.py", ["test_plugin_contract.py",
                                                      "test_rules_table_verdict_contract.py",
                                                      "test_plugin_ci.py", "test_history_band.py"]),
    "scan": ("rlcheck/scan.py", ["test_scan.py", "test_rules_table_scan.py", "test_scan_inputs.py"]),
    # the engines, and the cache of compiled forms (cache_dir, read_cached / write_cached, the Hyperscan database)
    # that test_catalog_compiled.py judges
    "scan_engines": ("rlcheck/scan_engines.py", ["test_scan.py", "test_rules_table_scan.py",
                                                 "test_scan_inputs.py", "test_catalog_compiled.py"]),
    # the loader, the validated-catalogue cache (catalog_key, _compiled, validate_catalog, is_loaded) and log_traits
    "catalog": ("rlcheck/catalog.py", ["test_catalog.py", "test_rules_table_catalog.py", "test_catalog_compiled.py",
                                       "test_watch_incidents.py"]),
    # the GO / NO-GO gate (results/mutation_gate.json): what skips, what decides, what acts on a node
    "gating": ("rlcheck/plugin/gating.py", ["test_rules_table_gating.py", "test_plugin.py"]),
    "junit": ("rlcheck/plugin/junit.py", ["test_plugin_ci.py", "test_rules_table_junit.py"]),
    "k8s_node": ("rlcheck/deploy/k8s_node.py", ["test_rules_table_k8s_node.py", "test_k8s.py",
                                                "test_k8s_api.py"]),
    "k8s_api": ("rlcheck/deploy/k8s_api.py", ["test_k8s_api.py", "test_k8s_api_hostile.py", "test_k8s_node_health.py",
                                             "test_rules_table_k8s_api.py"]),
    "slurm": ("rlcheck/preflight/slurm.py", ["test_slurm.py", "test_rules_table_slurm.py"]),
    "gpu_inventory": ("rlcheck/probes/gpu/gpu_inventory.py",
                      ["test_probe_gpu_inventory.py", "test_fault_matrix.py",
                       "test_rules_table_gpu_inventory.py"]),
    "report": ("rlcheck/report.py", ["test_rules_table_report.py", "test_rules_table_decision.py",
                                     "test_fault_matrix.py",
                                     "test_history.py", "test_plugin_exit.py"]),
    "report_nodes": ("rlcheck/report_nodes.py", ["test_rules_table_report_nodes.py", "test_report_nodes.py"]),
    "k8s_condition": ("rlcheck/deploy/k8s_condition.py", ["test_rules_table_k8s_condition.py",
                                                          "test_k8s_node_health.py"]),
    # which values are secrets and what every writer hides (test_secrets.py's 1 MB inputs take 45 s a pass)
    "secret_guard": ("rlcheck/secret_guard.py", ["test_rules_table_secret_guard.py"]),
    # the verdicts of the recipe, image, node and cluster probes not targeted before (results/mutation_probes.json)
    "context_length": ("rlcheck/probes/recipe/context_length.py", ["test_rules_table_context_length.py"]),
    "health_wait": ("rlcheck/probes/recipe/health_wait.py", ["test_rules_table_health_wait.py"]),
    "ld_preload": ("rlcheck/probes/image/ld_preload.py", ["test_rules_table_ld_preload.py"]),
    "job_shape": ("rlcheck/probes/recipe/job_shape.py", ["test_probe_job_shape.py", "test_rules_table_job_shape.py"]),
    "proxy_env": ("rlcheck/probes/recipe/proxy_env.py", ["test_probe_proxy_env.py", "test_rules_table_proxy_env.py"]),
    "argv_shell": ("rlcheck/probes/recipe/argv_shell.py", ["test_probe_job_argv.py", "test_rules_table_argv_shell.py"]),
    "sglang_flags": ("rlcheck/probes/recipe/sglang_flags.py", ["test_probe_sglang_flags.py",
                                                               "test_rules_table_sglang_flags.py"]),
    "checkpoint_save": ("rlcheck/probes/recipe/checkpoint_save.py", ["test_probe_reach_save.py",
                                                                     "test_rules_table_checkpoint_save.py"]),
    "hf_config": ("rlcheck/probes/recipe/hf_config.py", ["test_probe_architecture.py", "test_probe_field_caps.py",
                                                         "test_registry.py", "test_rules_table_hf_config.py"]),
    # test_secrets.py's 1 MB hostile inputs take 45 s a pass: the rule table judges every rule without them
    "inline_secrets": ("rlcheck/probes/recipe/inline_secrets.py", ["test_probe_job_argv.py",
                                                                   "test_rules_table_inline_secrets.py"]),
    "node_addresses": ("rlcheck/probes/cluster/node_addresses.py", ["test_probe_reach_save.py",
                                                                    "test_rules_table_node_addresses.py"]),
    "node_versions": ("rlcheck/probes/cluster/node_versions.py", ["test_probe_node_stack.py",
                                                                  "test_probe_gpu_health.py",
                                                                  "test_rules_table_node_versions.py"]),
    "cluster_reach": ("rlcheck/probes/cluster/cluster_reach.py", ["test_probe_node.py",
                                                                  "test_rules_table_cluster_reach.py"]),
    "nccl_pairs": ("rlcheck/probes/cluster/nccl_pairs.py",
                   ["test_probe_nccl_pairs.py", "test_pairs_schedule.py", "test_rules_table_nccl_pairs.py"]),
    "numpy_megatron": ("rlcheck/probes/image/numpy_megatron.py", ["test_probe_numpy_megatron.py",
                                                                  "test_rules_table_numpy_megatron.py"]),
    "torch_pg": ("rlcheck/probes/image/torch_pg.py", ["test_probe_torch_pg.py", "test_rules_table_torch_pg.py"]),
    "tms": ("rlcheck/probes/node/tms.py", ["test_probe_tms.py", "test_fix_tms_preload.py", "test_rules_table_tms.py"]),
    "architecture": ("rlcheck/probes/recipe/architecture.py", ["test_probe_architecture.py",
                                                                "test_rules_table_architecture.py",
                                                                "test_architecture_kept.py"]),
    "model_registry": ("rlcheck/probes/recipe/model_registry.py", ["test_probe_architecture.py",
                                                                    "test_rules_table_model_registry.py"]),
    "memory_buffers": ("rlcheck/probes/recipe/memory_buffers.py", ["test_probe_memory_buffers.py",
                                                                    "test_probe_memory.py",
                                                                    "test_rules_table_memory_buffers.py",
                                                                    "test_rules_table_debug_modes.py"]),
    "memory_activations": ("rlcheck/probes/recipe/memory_activations.py", ["test_probe_memory_activations.py",
                                                                            "test_probe_memory.py",
                                                                            "test_rules_table_memory_activations.py"]),
    "slime_source": ("rlcheck/probes/image/slime_source.py", ["test_probe_image.py",
                                                               "test_rules_table_slime_source.py"]),
    "cluster_gpus": ("rlcheck/probes/cluster/cluster_gpus.py", ["test_probe_node.py",
                                                                 "test_rules_table_cluster_gpus.py"]),
    "node_health_links": ("rlcheck/probes/cluster/node_health_links.py", ["test_probe_gpu_nvml.py",
                                                                           "test_rules_table_node_health_links.py"]),
    # the pairs driver without a cluster (test_pairs_loopback.py runs it on a real Ray, too slow for each mutant)
    "pairs_driver": ("rlcheck/probes/cluster/pairs_driver.py", ["test_rules_table_pairs_driver.py",
                                                                 "test_pairs_schedule.py"]),
    # judged on recorded results with the child replaced (test_probe_gpu_smoke.py's real CPU runs take a minute)
    "gpu_smoke": ("rlcheck/probes/gpu/gpu_smoke.py", ["test_rules_table_gpu_smoke.py"]),
    # the e2e judges (results/mutation_e2e.json): what stops a live run, how a recorded log is read and judged
    "e2e_watch": ("rlcheck/e2e/watch.py", ["test_watch.py", "test_watch_incidents.py",
                                           "test_rules_table_e2e_watch.py", "test_replay.py"]),
    "e2e_slime_log": ("rlcheck/e2e/slime_log.py", ["test_slime_log.py", "test_watch.py",
                                                   "test_rules_table_e2e_slime_log.py", "test_replay.py"]),
    "e2e_slime_metrics": ("rlcheck/e2e/slime_metrics.py", ["test_watch.py",
                                                           "test_rules_table_e2e_slime_metrics.py"]),
    "e2e_replay": ("rlcheck/e2e/replay.py", ["test_replay.py", "test_watch_incidents.py",
                                             "test_rules_table_e2e_replay.py"]),
    # one case's run on Ray and its verdicts (the job client and the clock recorded: test_e2e_harness.py runs Ray)
    "e2e_runner": ("rlcheck/e2e/runner.py", ["test_rules_table_e2e_runner.py", "test_e2e_reward_side.py"]),
    "e2e_baselines": ("rlcheck/e2e/baselines.py", ["test_rules_table_e2e_baselines.py"]),
    # what is kept per image (results/mutation_repro.json; test_repro_cache.py's pytester runs judge the plugin's use)
    "repro_cache": ("rlcheck/repro/cache.py", ["test_rules_table_repro_cache.py"]),
    "repro_image_facts": ("rlcheck/repro/image_facts.py", ["test_rules_table_repro_image_facts.py",
                                                           "test_image_facts.py"]),
    # a reproducer judged against the catalogue's range, and Megatron's validate_args in a child (none started here)
    "repro_reproduce": ("rlcheck/repro/reproduce.py", ["test_rules_table_repro_reproduce.py", "test_reproduce.py"]),
    "repro_megatron_args": ("rlcheck/repro/megatron_args.py", ["test_rules_table_megatron_args.py"]),
    # how a reproducer makes a package absent, finds another version of it, and starts its children ahead
    "repro_site_mirror": ("rlcheck/repro/site_mirror.py",
                          ["test_rules_table_site_mirror.py", "test_site_mirror_fork.py"]),
    "repro_sidecar": ("rlcheck/repro/sidecar.py", ["test_rules_table_sidecar.py"]),
    "repro_ahead": ("rlcheck/repro/ahead.py", ["test_repro_ahead.py", "test_rules_table_ahead.py"]),
    "history": ("rlcheck/history.py", ["test_history.py", "test_history_band.py", "test_history_fleet.py",
                                       "test_rules_table_history.py", "test_rules_table_history_draw.py"]),
    "history_band": ("rlcheck/history_band.py", ["test_history_band.py", "test_rules_table_history.py"]),
    # what one node reads of itself (results/mutation_probes.json): ELF headers, packages, the kernel log, GPUs, NVML
    "node_elf": ("rlcheck/probes/node/elf.py", ["test_rules_table_elf.py", "test_rules_table_tms.py"]),
    "node_packages": ("rlcheck/probes/node/packages.py", ["test_rules_table_packages.py"]),
    "node_pair_member": ("rlcheck/probes/node/pair_member.py", ["test_rules_table_pair_member.py"]),
    "node_gpu_kernel_log": ("rlcheck/probes/node/gpu_kernel_log.py", ["test_rules_table_gpu_kernel_log.py",
                                                                      "test_probe_gpu_health.py"]),
    "node_stack": ("rlcheck/probes/node/node_stack.py", ["test_rules_table_node_stack.py", "test_probe_node_stack.py"]),
    "node_gpus": ("rlcheck/probes/node/gpus.py", ["test_rules_table_gpus.py"]),
    "node_gpu_nvml": ("rlcheck/probes/node/gpu_nvml.py", ["test_rules_table_gpu_nvml.py", "test_probe_gpu_nvml.py"]),
    "node_collect": ("rlcheck/probes/node/collect.py", ["test_rules_table_collect.py"]),
    "node_gpu_health": ("rlcheck/probes/node/gpu_health.py", ["test_rules_table_gpu_health_reading.py",
                                                              "test_probe_gpu_health.py", "test_probe_gpu_nvml.py",
                                                              "test_rules_table_gpu_health.py"]),
    # which SLIME or Miles version (and so which schema) judges a user's launch (results/mutation_gate.json)
    "framework_detect": ("rlcheck/framework/detect.py", ["test_framework_detect.py", "test_job_tree_version.py",
                                                        "test_rules_table_framework_detect.py"]),
    "framework_argv": ("rlcheck/framework/argv.py", ["test_rules_table_framework_argv.py", "test_framework_args.py",
                                                    "test_framework_miles_parsers.py"]),
    # the installed framework's own parse (its child process is answered by a recording here)
    "framework_live": ("rlcheck/framework/live.py", ["test_rules_table_framework_live.py"]),
    # the schemas as loaded and as extracted from a framework's source or a live parser
    "framework_schema": ("rlcheck/framework/schema.py", ["test_rules_table_framework_schema.py",
                                                        "test_framework_args.py"]),
    # the Megatron options each schema adds: SLIME's image patch, Miles' Megatron branch, FSDP dataclass, generate hooks
    "framework_patch_flags": ("rlcheck/framework/patch_flags.py", ["test_rules_table_framework_patch_flags.py",
                                                                  "test_framework_patch_flags.py",
                                                                  "test_framework_miles_parsers.py"]),
    # the job readers (results/mutation_job.json): a user's argv read as SLIME's parser would
    "job_argv_flags": ("rlcheck/job/argv_flags.py", ["test_rules_table_to_recipe.py"]),
    "job_argv_model": ("rlcheck/job/argv_model.py", ["test_rules_table_argv_model.py",
                                                     "test_rules_table_to_recipe.py"]),
    "job_to_recipe": ("rlcheck/job/to_recipe.py", ["test_rules_table_to_recipe.py", "test_rules_recipe.py",
                                                   "test_rules_table_debug_modes.py"]),
    # the capture sandbox's bounds and readers of untrusted job documents (results/mutation_job.json)
    "job_typed": ("rlcheck/job/typed.py", ["test_rules_table_job_typed.py"]),
    "job_bounded": ("rlcheck/job/bounded.py", ["test_rules_table_job_bounded.py"]),
    "job_recorder": ("rlcheck/job/recorder.py", ["test_rules_table_job_recorder.py"]),
    "job_sandbox": ("rlcheck/job/sandbox.py", ["test_rules_table_job_sandbox.py", "test_rules_table_job_confine.py"]),
    "job_confine": ("rlcheck/job/confine.py", ["test_rules_table_job_confine.py"]),
    "job_capture": ("rlcheck/job/capture.py", ["test_rules_table_job_capture.py"]),
    "job_needs": ("rlcheck/job/needs.py", ["test_rules_table_needs.py"]),
    "job_rayjob": ("rlcheck/job/rayjob.py", ["test_rules_table_rayjob.py"]),
    "job_job": ("rlcheck/job/job.py", ["test_rules_table_job_job.py"]),
    "job_script": ("rlcheck/job/script.py", ["test_rules_table_job_script.py"]),
    "job_miles_stub": ("rlcheck/job/miles_stub.py", ["test_rules_table_miles_stub.py"]),
    "job_corpus": ("rlcheck/job/corpus.py", ["test_rules_table_job_corpus.py"]),
    "job_submit": ("rlcheck/job/submit.py", ["test_rules_table_job_submit.py"]),
    "job_replay": ("rlcheck/job/replay.py", ["test_rules_table_job_replay.py"]),
    # the deployment renderers, the fan-out's result and the scan's input/output (results/mutation_deploy.json)
    "deploy_node_metrics": ("rlcheck/deploy/node_metrics.py", ["test_rules_table_node_metrics.py"]),
    "deploy_levels": ("rlcheck/deploy/levels.py", ["test_rules_table_deploy_levels.py", "test_k8s_levels.py"]),
    "fanout_result": ("rlcheck/cluster/fanout_result.py", ["test_rules_table_fanout_result.py"]),
    "scan_output": ("rlcheck/scan_output.py", ["test_rules_table_scan_output.py"]),
    "scan_input": ("rlcheck/scan_input.py", ["test_rules_table_scan_input.py"]),
    "deploy_manifests": ("rlcheck/deploy/manifests.py", ["test_rules_table_deploy_manifests.py"]),
    "deploy_k8s_manifests": ("rlcheck/deploy/k8s_manifests.py", ["test_rules_table_k8s_manifests.py"]),
    "deploy_render": ("rlcheck/deploy/render.py", ["test_rules_table_render.py"]),
    "deploy_yaml_text": ("rlcheck/deploy/yaml_text.py", ["test_rules_table_yaml_text.py"]),
    # the verdict type and the pytest plugin's plumbing (results/mutation_plugin.json)
    # the per-node fan-out: which node died, erred or timed out, and the driver's planned deadline (a stand-in Ray)
    "cluster_fanout": ("rlcheck/cluster/fanout.py", ["test_rules_table_cluster_fanout.py"]),
    # the Ray job submission and the fan-out through the Jobs API (a stand-in Jobs client and clock: no Ray)
    "cluster_launch": ("rlcheck/cluster/launch.py", ["test_rules_table_launch.py"]),
    "cluster_fanout_job": ("rlcheck/cluster/fanout_job.py", ["test_rules_table_fanout_job.py", "test_fanout_plan.py"]),
    "cluster_exec_argv": ("rlcheck/cluster/exec_argv.py", ["test_rules_table_exec_argv.py"]),
    # the embedded loopback Ray the cluster checks run on without --ray-address (a stand-in holder and Ray modules)
    "cluster_local_ray": ("rlcheck/cluster/local_ray.py", ["test_rules_table_local_ray.py"]),
    "cluster_embedded_ray": ("rlcheck/cluster/embedded_ray.py", ["test_rules_table_embedded_ray.py"]),
    # the image fixes (results/mutation_fixes.json; test_fix_driver_guard.py's real Megatron children are too slow)
    "fixes_driver_guard": ("rlcheck/fixes/driver_guard.py", ["test_rules_table_driver_guard.py"]),
    "fixes_tms_preload": ("rlcheck/fixes/tms_preload.py", ["test_rules_table_tms_preload.py",
                                                           "test_fix_tms_preload.py"]),
    # rlcheck's command line: each command's exit code and words, and the guard's one line for a broken data file
    "cli": ("rlcheck/cli.py", ["test_rules_table_cli.py", "test_rules_table_cli_run.py", "test_catalog.py"]),
    # the exit codes of `rlcheck preflight`, `rlcheck slurm` (a broken rlcheck never drains a node) and `history`
    "cli_run": ("rlcheck/cli_run.py", ["test_rules_table_cli_run.py"]),
    # the bounded waits and child processes every check's "could not run" verdict rests on
    "process_reach": ("rlcheck/process/reach.py", ["test_rules_table_process.py"]),
    "process_wait": ("rlcheck/process/wait.py", ["test_rules_table_process.py", "test_wait.py"]),
    "process_subproc": ("rlcheck/process/subproc.py", ["test_rules_table_process.py", "test_wait.py"]),
    "verdict": ("rlcheck/verdict.py", ["test_verdict.py", "test_rules_table_verdict.py"]),
    "option_table": ("rlcheck/option_table.py", ["test_options_table.py", "test_rules_table_option_table.py"]),
    # the pytester runs of tests/test_plugin*.py take seconds each: the rule tables call the functions directly
    "plugin_options": ("rlcheck/plugin/options.py", ["test_rules_table_plugin_options.py"]),
    "plugin_flags": ("rlcheck/plugin/flags.py", ["test_rules_table_plugin_flags.py"]),
    "plugin_items": ("rlcheck/plugin/items.py", ["test_rules_table_plugin_items.py"]),
    "plugin_markers": ("rlcheck/plugin/markers.py", ["test_rules_table_plugin_markers.py"]),
    "plugin_cache": ("rlcheck/plugin/cache.py", ["test_rules_table_plugin_cache.py"]),
    "plugin_progress": ("rlcheck/plugin/progress.py", ["test_rules_table_plugin_progress.py"]),
    "plugin_resources": ("rlcheck/plugin/resources.py", ["test_rules_table_plugin_resources.py", "test_early_ray.py"]),
    # the recipes, hardware profiles and the preflight gate (results/mutation_recipes.json)
    "preflight_gate": ("rlcheck/preflight/gate.py", ["test_rules_table_preflight_gate.py"]),
    "preflight_registry": ("rlcheck/preflight/registry.py", ["test_rules_table_preflight_registry.py",
                                                             "test_rules_table_debug_modes.py"]),
    "hardware": ("rlcheck/hardware.py", ["test_rules_table_hardware.py", "test_hardware.py", "test_thresholds.py"]),
    "preflight_job_inputs": ("rlcheck/preflight/job_inputs.py", ["test_rules_table_job_inputs.py"]),
    "recipes_deltas": ("rlcheck/recipes/deltas.py", ["test_rules_table_recipe_deltas.py", "test_recipes.py"]),
    "preflight_recipe": ("rlcheck/preflight/recipe.py", ["test_rules_table_preflight_recipe.py",
                                                         "test_rules_table_debug_modes.py"]),
    "recipes_glm": ("rlcheck/recipes/glm.py", ["test_rules_table_recipe_glm.py", "test_recipes.py"]),
    "recipes_recipe": ("rlcheck/recipes/recipe.py", ["test_rules_table_recipe_recipe.py", "test_recipes.py",
                                                     "test_rules_table_debug_modes.py"]),
    "recipes_models": ("rlcheck/recipes/models.py", ["test_rules_table_recipe_models.py", "test_recipes.py"]),
    # the shipped recipes' values: each rendered argv is frozen by test_render.py's snapshots
    "recipes_cases": ("rlcheck/recipes/cases.py", ["test_rules_table_recipe_cases.py", "test_recipes.py",
                                                   "test_render.py"]),
    "preflight_baseline": ("rlcheck/preflight/baseline.py", ["test_rules_table_preflight_baseline.py",
                                                             "test_baseline.py", "test_baseline_hostile.py"]),
    "preflight_cluster": ("rlcheck/preflight/cluster.py", ["test_rules_table_preflight_cluster.py"]),
    "preflight_gpu": ("rlcheck/preflight/gpu.py", ["test_rules_table_preflight_gpu.py"]),
    "preflight_image": ("rlcheck/preflight/image.py", ["test_rules_table_preflight_image.py"]),
    # the reward service's judges (results/mutation_reward.json): SLIME's math grader as rlcheck grades it
    "reward_slime_math": ("rlcheck/reward/slime_math.py", ["test_rules_table_slime_math.py",
                                                          "test_reward_grading_modes.py"]),
    "reward_scorers": ("rlcheck/reward/scorers.py", ["test_rules_table_scorers.py", "test_reward_scorers.py"]),
    "reward_config": ("rlcheck/reward/config.py", ["test_rules_table_reward_config.py", "test_reward_config.py"]),
    "reward_metrics": ("rlcheck/reward/metrics.py", ["test_rules_table_reward_metrics.py", "test_reward_metrics.py"]),
    "reward_results": ("rlcheck/reward/results.py", ["test_rules_table_reward_results.py"]),
    "reward_harness": ("rlcheck/reward/harness.py", ["test_rules_table_reward_harness.py"]),
    "reward_app": ("rlcheck/reward/app.py", ["test_rules_table_reward_app.py"]),
    "reward_cli": ("rlcheck/reward/cli.py", ["test_rules_table_reward_cli.py", "test_reward_config.py"]),
    "reward_worker": ("rlcheck/reward/worker.py", ["test_rules_table_reward_worker.py"]),
    # the pool judged with stand-in processes on real pipes (test_reward_pool.py's real processes take a minute)
    "reward_pool": ("rlcheck/reward/pool.py", ["test_rules_table_reward_pool.py"]),
    "reward_procs": ("rlcheck/reward/procs.py", ["test_rules_table_reward_procs.py"]),
    # the command-line extras, the warm interpreters and the small judges (results/mutation_extras.json)
    # `rlcheck baseline record`: its exit code, the file it writes and its one line (the GPU measure replaced)
    "cli_baseline": ("rlcheck/cli_baseline.py", ["test_rules_table_cli_baseline.py"]),
    # `rlcheck k8s render|apply-node-status`: exit codes and words, which way applies (kubectl, the API), the taint said
    "cli_k8s": ("rlcheck/cli_k8s.py", ["test_rules_table_cli_k8s.py"]),
    # the type checks of the TOML data files: which value each kind accepts and each refusal's words
    "data_types": ("rlcheck/data_types.py", ["test_rules_table_data_types.py"]),
    # the field corpus: which rows load, how the scanner's replay is counted, the docs section's recall and precision
    "field_corpus": ("rlcheck/field_corpus.py", ["test_rules_table_field_corpus.py"]),
    # the progress lines' writer: when a silence speaks, its words, the events it takes, main's wiring
    "plugin_heartbeat": ("rlcheck/plugin/heartbeat.py", ["test_rules_table_heartbeat.py"]),
    # the README's check table: each row's words from a check's registration, put between its markers only
    "preflight_docs": ("rlcheck/preflight/docs.py", ["test_rules_table_preflight_docs.py"]),
    # the warm interpreter's server in this process (os, select, signal, threading stand-ins): a child's exit status,
    # each step that makes it a fresh `python -c`, the statuses reaped, the serve loop and main's import report
    "process_warm_server": ("rlcheck/process/warm_server.py", ["test_rules_table_warm_server.py"]),
    # the warm interpreters' client, its server a stand-in on in-memory pipes: ready or not, a run's Completed, the
    # deadline's TERM then KILL, which runs share a server, when a run goes cold, how servers stop
    "process_warm": ("rlcheck/process/warm.py", ["test_rules_table_warm.py"]),
    # the reward service's bounded uvicorn: the header timer, the warning it logs, the shutdown's order and bound
    "reward_server": ("rlcheck/reward/server.py", ["test_rules_table_reward_server.py"]),
}
PYTEST_ARGS = ["-p", "no:cacheprovider", "-q", "-x"]
COPY = ["rlcheck/", "tests/", "conftest.py", "checks/", "README.md", "docs/", "pyproject.toml", "testcases/",
        "reproducers/"]


def test_paths(names: list[str], tests_root: Path | None = None) -> list[str]:
    """Each self-test file name as its path under tests/ (relative to the checkout), wherever it lies below it.
    A name found nowhere, or in more than one folder, is an error naming it: the target would judge nothing, or the
    wrong file."""
    tests_root = tests_root or ROOT / "tests"
    paths = []
    for name in names:
        found = sorted(p for p in tests_root.rglob(name) if p.is_file() and "__pycache__" not in p.parts)
        if len(found) != 1:
            where = ", ".join(str(p.relative_to(tests_root.parent)) for p in found) or "nowhere"
            raise SystemExit(f"self-test {name!r} must be one file under {tests_root}: found {where}")
        paths.append(found[0].relative_to(tests_root.parent).as_posix())
    return paths


def ensure_tool() -> None:
    if not (TOOL / "mutmut").is_dir():
        if os.environ.get("RLCHECK_MUTMUT_SITE"):
            sys.exit(f"RLCHECK_MUTMUT_SITE={TOOL} holds no mutmut: unpack a --target install of {MUTMUT} there")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(TOOL), MUTMUT], check=True)


def copy_tree(work: Path) -> str:
    """The committed checkout (git archive HEAD) when the working tree is that commit; else (uncommitted changes,
    or a device's copy of the working tree, whose .git may be older than its files) the files the self-tests read.
    Returns what was mutated, for the result."""
    source = _archive_head(work) or _copy_files(work)
    if (ROOT / ".venv").is_dir():
        (work / ".venv").symlink_to(ROOT / ".venv")
    return source


def _archive_head(work: Path) -> str:
    """'git archive SHA' after unpacking HEAD into work; '' (nothing written) when the tree is no clean checkout."""
    if not (ROOT / ".git").exists():
        return ""
    git = ["git", "-C", str(ROOT)]
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           check=False)
    if dirty.returncode != 0 or dirty.stdout.strip():
        return ""
    archive = subprocess.run([*git, "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return f"git archive {head.stdout.strip()}"


def _copy_files(work: Path) -> str:
    skip = shutil.ignore_patterns("__pycache__", ".hypothesis", "rlcheck-report*")
    for entry in COPY:
        src = ROOT / entry
        if src.is_dir():
            shutil.copytree(src, work / entry, ignore=skip)
        elif src.is_file():
            shutil.copy2(src, work / entry)
    return "the working tree (not a clean git checkout)"


def run_target(name: str, timeout_s: float = 3600.0) -> dict[str, object]:
    module, names = TARGETS[name]
    tests = test_paths(names)
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    source = copy_tree(work)
    with (work / "pyproject.toml").open("a", encoding="utf-8") as f:
        f.write(f"\n[tool.mutmut]\npaths_to_mutate = [{module!r}]\ntests_dir = {json.dumps(tests)}\n"
                f"also_copy = {json.dumps(COPY)}\npytest_add_cli_args = {json.dumps(PYTEST_ARGS)}\n")
    # mutants/ first: a test's child process (pytester's runpytest_subprocess, `python -m pytest` from a temporary
    # folder) imports the mutated rlcheck too, and with it sees the mutant under test (MUTANT_UNDER_TEST is in its
    # environment); without it a child imports the checkout's own rlcheck (an editable install) or, on a machine
    # where rlcheck is not installed (the device's copy), none at all. The folder exists before mutmut starts: Python
    # remembers a path entry missing at its start as holding nothing, and would never import from it
    (work / "mutants").mkdir()
    # a child started while mutmut collects which tests reach which function (MUTANT_UNDER_TEST=stats) would record
    # its hits through mutmut's config, which it reads from its own folder (a test's temporary one: no config there,
    # and the child fails); a child's hits never reach mutmut anyway, so a child runs the original code then
    children = work / "children"
    children.mkdir()
    (children / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('MUTANT_UNDER_TEST') == 'stats':\n    del os.environ['MUTANT_UNDER_TEST']\n",
        encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(children), str(work / "mutants"), str(TOOL)]), "PATH": "/usr/bin:/bin"}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run"], cwd=work, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        tail, _ = proc.communicate(timeout=timeout_s)
        complete, exit_code = True, proc.returncode
    except subprocess.TimeoutExpired:  # what was judged before the deadline is kept, and said to be partial
        os.killpg(proc.pid, signal.SIGKILL)  # mutmut's forked test runners share its session
        proc.communicate()
        complete, exit_code, tail = False, None, f"mutmut run stopped at its {timeout_s:.0f} s deadline"
    listing = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=work, env=env,
                             capture_output=True, text=True, timeout=600).stdout
    states = dict(re.findall(r"^\s*(\S+): (\w[\w ]*)$", listing, re.M))
    killed = sum(1 for s in states.values() if s == "killed")
    # a mutant no selected test reaches ("no tests") is a survivor too: nothing would turn it red
    survivors = sorted(k for k, s in states.items() if s in ("survived", "no tests"))
    total = killed + len(survivors)
    equivalent = {m: EQUIVALENT[m] for m in survivors if m in EQUIVALENT}
    return {"module": module, "tests": tests, "source": source, "mutants": len(states), "killed": killed,
            "survived": len(survivors),
            "other": len(states) - total, "other_states": dict(Counter(s for s in states.values()
                                                                       if s not in ("killed", "survived"))),
            "score": round(killed / total, 3) if total else None,
            # the score with the mutants no test can tell apart left out (killed / mutants that can be killed)
            "score_without_equivalent": round(killed / (total - len(equivalent)), 3) if total > len(equivalent)
            else None,
            "elapsed_s": round(time.monotonic() - start, 1), "survivors": survivors, "equivalent": equivalent,
            "unexplained": [m for m in survivors if m not in equivalent],
            # mutmut stops before any mutant when the selected tests fail unmutated: say why, never a silent 0
            "complete": complete, "mutmut_exit": exit_code, "mutmut_tail": "" if total and complete else tail[-1500:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--result", default="mutation", help="result file name under benchmarks/results/; targets "
                        "already in it that this run does not name are kept (each carries its own command and date)")
    parser.add_argument("--timeout-s", type=float, default=3600.0, help="deadline of one target's mutmut run; a "
                        "target stopped by it keeps the mutants judged so far and says complete: false")
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"one of {', '.join(TARGETS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {unknown}: valid are {', '.join(TARGETS)}")
    ensure_tool()
    command = shlex.join([Path(sys.executable).name, *sys.orig_argv[1:]])
    results = {name: {**run_target(name, args.timeout_s), "command": command,
                      "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                      "machine": results_file.machine()}  # per entry: entries kept from other runs keep theirs
               for name in (args.targets or TARGETS)}
    previous = results_file.RESULTS / f"{args.result}.json"
    kept = json.loads(previous.read_text(encoding="utf-8")).get("targets", {}) if previous.is_file() else {}
    doc = {"tool": MUTMUT, "targets": {**kept, **results}, "goal": ">= 90% of mutants killed per module",
           "notes": ["survivors are listed by mutant name; `cd .mutation/<target> && mutmut show NAME` prints the "
                     "diff"]}
    path = results_file.write(args.result, doc)
    for name, r in results.items():
        print(f"{name}: {r['killed']}/{int(r['killed']) + int(r['survived'])} killed (score {r['score']})")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
