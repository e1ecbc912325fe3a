"""Rule table for how a user's argv is read as SLIME's parser would (rlcheck.job.to_recipe): each flag's last value,
`--flag=value` and a bare flag, SLIME's defaults for what the argv leaves out, the known model its identity flags all
match (or the stand-in and the whole reason), the global batch and steps SLIME derives, and the flags the Recipe does
not render kept for the judges that read them."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.facts import Need
from rlcheck.job import to_recipe
from rlcheck.job.job import Job
from rlcheck.job.to_recipe import Flags
from rlcheck.recipes.models import MODELS
from rlcheck.recipes.recipe import Reward

QWEN4B = tuple(MODELS["Qwen3-4B"].argv())
QWEN30B = tuple(MODELS["Qwen3-30B-A3B"].argv())
KNOWN = ", ".join(MODELS)


def _job(*argv: str, **fields) -> Job:
    argv = argv or ("python3", "train.py", "--colocate")
    return Job(argv=argv, intended_argv=argv, entrypoint="", source="run.sh", source_format="bash", **fields)


# --- Flags: the last value of each flag ------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "values"), [
    (["--a", "1", "--b=2", "--c", "--d"], {"--a": "1", "--b": "2", "--c": "", "--d": ""}),
    (["--a", "1", "--a", "3"], {"--a": "3"}),  # the last one wins, as argparse reads it
    (["--a=x=y"], {"--a": "x=y"}),  # only the first = splits
    (["--a="], {"--a": ""}),
    (["train.py", "-x", "5", "--a", "-1"], {"--a": "-1"}),  # one dash is a value, not a flag
    (["--a", "--b", "v"], {"--a": "", "--b": "v"}),
    # one token holding a space is a value to argparse, not an option (quoted as one word where two were meant)
    (["--a", "--b v", "--c"], {"--a": "--b v", "--c": ""}),
    (["--c", "--b v"], {"--c": "--b v"}),
    (["--b v"], {}),
    (["--a=x y"], {"--a": "x y"}),  # the space after `=`: the option --a with the value "x y"
    (["--a b=c"], {}),
])
def test_flags_read_each_flags_last_value(argv, values):
    assert Flags(argv).values == values


@pytest.mark.parametrize(("raw", "default", "value"), [
    (None, None, None), (None, 4, 4), ("", 4, 4), ("7", 4, 7), ("0", 4, 0), ("-2", None, -2),
])
def test_flags_int_reads_the_value_or_the_default(raw, default, value):
    flags = Flags([] if raw is None else ["--n", raw] if raw else ["--n"])
    assert flags.int("--n", default) == value
    assert flags.has("--n") is (raw is not None)


@pytest.mark.parametrize(("raw", "value"), [(None, 0.5), ("", 0.5), ("0.7", 0.7), ("1e-3", 0.001), ("0", 0.0)])
def test_flags_float_reads_the_value_or_the_default(raw, value):
    flags = Flags([] if raw is None else ["--t", raw] if raw else ["--t"])
    assert flags.float("--t", 0.5) == value


def test_flags_that_are_not_numbers_are_refused_naming_the_flag_and_value():
    flags = Flags(["--n", "x4", "--t", "hot"])
    with pytest.raises(ValueError) as exc:
        flags.int("--n")
    assert str(exc.value) == "--n 'x4': expected an integer"
    assert isinstance(exc.value.__cause__, ValueError)
    with pytest.raises(ValueError) as exc:
        flags.float("--t", 1.0)
    assert str(exc.value) == "--t 'hot': expected a number"
    assert isinstance(exc.value.__cause__, ValueError)


@pytest.mark.parametrize(("argv", "default", "value"), [
    ([], None, None), ([], "d", "d"), (["--s"], "d", "d"), (["--s", "v"], "d", "v"), (["--s", "v"], None, "v"),
])
def test_flags_str_is_the_value_or_the_default_when_empty(argv, default, value):
    assert Flags(argv).str("--s", default) == value


# --- model_of: the known model, or the stand-in and why ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["Qwen3-4B", "Qwen3-30B-A3B", "GLM-5.2", "GLM-5.2_5layer", "GLM-5"])
def test_a_known_models_own_flags_read_as_that_model(name):
    assert to_recipe.model_of(Flags(MODELS[name].argv())) == (MODELS[name], "")


def test_a_spec_model_without_its_spec_is_the_model_its_flags_describe():
    """Without --spec Megatron builds its own MLA layers from the flags: no DSA indexer, and not GLM-5."""
    argv = [t for t in MODELS["GLM-5"].argv() if t not in MODELS["GLM-5"].spec]
    model, why = to_recipe.model_of(Flags(argv))
    assert (model.name, why) == ("the argv's 78-layer model", "")
    assert model.attention == dataclasses.replace(MODELS["GLM-5"].attention, indexer=None, kv_channels=192)
    assert (model.moe, model.untie_embeddings) == (MODELS["GLM-5"].moe and dataclasses.replace(
        MODELS["GLM-5"].moe, extra=(), extra_after_bias=()), True)


UNCOUNTED = ("--multimodal-keys", '{"image": "images"}')
"""A flag that leaves the argv's model uncounted (a vision tower), so the known-model reasons show."""
VISION = ("it has a shape rlcheck does not count: --multimodal-keys {\"image\": \"images\"} (a vision-language "
          "model: the vision tower is not in the argv)")


def test_a_model_of_known_dims_that_differs_is_counted_from_its_flags():
    argv = [*QWEN4B[:-2], "--rotary-base", "10000", "--vocab-size", "1000"]
    model, why = to_recipe.model_of(Flags(argv))
    assert (model.name, why, model.vocab_size, model.rotary_base) == ("the argv's 36-layer model", "", 1000, 10000)
    assert dataclasses.replace(model, name="Qwen3-4B", vocab_size=151936, rotary_base=1_000_000, norm_epsilon="1e-6",
                               bias_linear=False, params_b=4.0) == MODELS["Qwen3-4B"]


def test_a_model_of_known_dims_that_differs_and_cannot_be_counted_names_each_flag_and_the_known_value():
    argv = [*QWEN4B[:-2], "--rotary-base", "10000", "--vocab-size", "1000", *UNCOUNTED]
    model, why = to_recipe.model_of(Flags(argv), [t for t in argv if t.startswith("--")])
    assert why == (f"the model (--num-layers 36, --hidden-size 2560, --ffn-hidden-size 9728, --num-attention-heads 32)"
                   f" is not among the known architectures ({KNOWN}) and cannot be counted from the argv: {VISION}; "
                   f"its dims are a known model's, but it has --vocab-size 1000 (Qwen3-4B: 151936), --rotary-base "
                   f"10000 (Qwen3-4B: 1000000)")
    assert (model.name, model.num_layers, model.moe) == ("unknown", 36, None)


def test_every_known_model_of_the_same_dims_is_named():
    argv = [*[t for t in MODELS["GLM-5"].argv() if t not in ("--rotary-base", "1000000")], "--rotary-base", "5",
            *UNCOUNTED]
    assert to_recipe.model_of(Flags(argv), ["--multimodal-keys"])[1].endswith(
        "its dims are a known model's, but it has --rotary-base 5 (GLM-5.2: 8000000); --rotary-base 5 (GLM-5: "
        "1000000)")


def test_a_known_models_dims_with_a_flag_left_out_says_not_given():
    argv = [*[t for t in QWEN4B if t not in ("--rotary-base", "1000000")], *UNCOUNTED]
    assert to_recipe.model_of(Flags(argv), ["--multimodal-keys"])[1].endswith(
        "its dims are a known model's, but it has --rotary-base (not given) (Qwen3-4B: 1000000)")


def test_other_dims_are_not_near_a_known_model():
    argv = [*QWEN4B[:1], "37", *QWEN4B[2:], *UNCOUNTED]
    model, why = to_recipe.model_of(Flags(argv), ["--multimodal-keys"])
    assert why == (f"the model (--num-layers 37, --hidden-size 2560, --ffn-hidden-size 9728, --num-attention-heads 32)"
                   f" is not among the known architectures ({KNOWN}) and cannot be counted from the argv: {VISION}")
    assert model.num_layers == 37


def test_other_experts_are_not_near_a_known_model_and_the_stand_in_keeps_them():
    argv = [*[t if t != "128" else "64" for t in QWEN30B], *UNCOUNTED]
    model, why = to_recipe.model_of(Flags(argv), ["--multimodal-keys"])
    assert "known model's" not in why and VISION in why
    assert model.moe is not None and (model.moe.num_experts, model.moe.router_topk) == (64, 1)


def test_other_experts_without_an_uncounted_flag_are_counted():
    argv = [t if t != "128" else "64" for t in QWEN30B]
    model, why = to_recipe.model_of(Flags(argv), [t for t in argv if t.startswith("--")])
    assert why == "" and model.moe is not None
    assert (model.moe.num_experts, model.moe.router_topk, model.moe.ffn_hidden_size) == (64, 8, 768)


NO_DIMS = (f"the model (no model dims) is not among the known architectures ({KNOWN}) and cannot be counted from the "
           "argv: the argv does not state --num-layers, --hidden-size, --num-attention-heads, --vocab-size")


@pytest.mark.parametrize(("argv", "layers", "experts"), [
    ([], 1, None),
    (["--expert-model-parallel-size", "1"], 1, None),
    (["--expert-model-parallel-size", "8"], 1, 8),  # no model stated: EP's experts, not a dense model
    (["--expert-model-parallel-size", "2"], 1, 2),
    (["--expert-model-parallel-size", "0"], 1, None),  # EP 0 reads as SLIME's default, 1
    (["--num-layers", "4", "--expert-model-parallel-size", "8"], 4, None),  # dims stated, no experts: dense
    (["--num-experts", "16", "--expert-model-parallel-size", "8"], 1, 16),
])
def test_the_stand_in_of_an_unknown_model(argv, layers, experts):
    model, why = to_recipe.model_of(Flags(argv))
    assert (model.name, model.num_layers, model.moe.num_experts if model.moe else None) == ("unknown", layers, experts)
    assert (model.hidden_size, model.ffn_hidden_size, model.num_attention_heads, model.vocab_size,
            model.rotary_base) == (1, 1, 1, 1, 1)
    if model.moe:
        assert (model.moe.router_topk, model.moe.ffn_hidden_size, model.moe.layer_freq) == (1, 1, "1")
    if not argv or argv[0] != "--num-layers":
        assert why == NO_DIMS


# --- the rollout, parallelism and placement SLIME would read ---------------------------------------------------------

@pytest.mark.parametrize(("argv", "batch", "n", "global_batch", "steps", "stated"), [
    ([], 1, 1, 1, 1, False),
    (["--rollout-batch-size", "32", "--n-samples-per-prompt", "8"], 32, 8, 256, 1, False),
    (["--rollout-batch-size", "32", "--n-samples-per-prompt", "8", "--num-steps-per-rollout", "4"], 32, 8, 64, 4,
     True),
    (["--rollout-batch-size", "32", "--n-samples-per-prompt", "8", "--global-batch-size", "64"], 32, 8, 64, 4, False),
    (["--rollout-batch-size", "3", "--n-samples-per-prompt", "1", "--num-steps-per-rollout", "4"], 3, 1, 1, 4, True),
    (["--rollout-batch-size", "4", "--global-batch-size", "8"], 4, 1, 8, 1, False),  # fewer than one step: one
    (["--rollout-batch-size", "6", "--global-batch-size", "4"], 6, 1, 4, 1, False),  # whole steps only
    (["--rollout-batch-size", "5", "--num-steps-per-rollout", "2"], 5, 1, 2, 2, True),  # a whole global batch
    (["--rollout-batch-size", "0", "--n-samples-per-prompt", "0"], 1, 1, 1, 1, False),
])
def test_rollout_global_batch_and_steps_as_slime_derives_them(argv, batch, n, global_batch, steps, stated):
    rollout, missing = to_recipe._rollout(Flags(argv))
    assert (rollout.rollout_batch_size, rollout.n_samples_per_prompt, rollout.global_batch_size,
            rollout.num_steps_per_rollout, rollout.steps_stated) == (batch, n, global_batch, steps, stated)
    assert (type(rollout.global_batch_size), type(rollout.num_steps_per_rollout)) == (int, int)
    given = "--rollout-batch-size" in argv and batch > 1  # a batch of 0 is none
    assert missing == ("" if given else "--rollout-batch-size is not in the argv")


def test_rollout_defaults_and_stated_values():
    rollout, _ = to_recipe._rollout(Flags([]))
    assert (rollout.num_rollout, rollout.max_response_len, rollout.temperature, rollout.max_tokens_per_gpu,
            rollout.micro_batch_size) == (1, 8192, 1.0, None, 1)
    rollout, _ = to_recipe._rollout(Flags(["--num-rollout", "5", "--rollout-max-response-len", "1024",
                                           "--rollout-temperature", "0.6", "--micro-batch-size", "2",
                                           "--max-tokens-per-gpu", "4096"]))
    assert (rollout.num_rollout, rollout.max_response_len, rollout.temperature, rollout.max_tokens_per_gpu,
            rollout.micro_batch_size) == (5, 1024, 0.6, None, 2)  # max tokens only counts with dynamic batches
    assert to_recipe._rollout(Flags(["--use-dynamic-batch-size"]))[0].max_tokens_per_gpu == 8192
    assert to_recipe._rollout(Flags(["--use-dynamic-batch-size", "--max-tokens-per-gpu", "4096"]))[0] \
        .max_tokens_per_gpu == 4096
    rollout, _ = to_recipe._rollout(Flags(["--num-rollout", "0", "--rollout-max-response-len", "0",
                                           "--micro-batch-size", "0"]))
    assert (rollout.num_rollout, rollout.max_response_len, rollout.micro_batch_size) == (1, 8192, 1)


def test_parallelism_defaults_to_one_of_each():
    p = to_recipe._parallel(Flags([]))
    assert (p.tp, p.pp, p.cp, p.ep, p.etp, p.sequence_parallel, p.pp_first_layers, p.pp_last_layers) == \
        (1, 1, 1, 1, 1, False, None, None)
    p = to_recipe._parallel(Flags(["--tensor-model-parallel-size", "0", "--pipeline-model-parallel-size", "0",
                                   "--context-parallel-size", "0", "--expert-model-parallel-size", "0",
                                   "--expert-tensor-parallel-size", "0"]))
    assert (p.tp, p.pp, p.cp, p.ep, p.etp) == (1, 1, 1, 1, 1)


def test_parallelism_as_stated():
    p = to_recipe._parallel(Flags(["--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "3",
                                   "--context-parallel-size", "4", "--expert-model-parallel-size", "5",
                                   "--expert-tensor-parallel-size", "6", "--sequence-parallel",
                                   "--decoder-first-pipeline-num-layers", "7",
                                   "--decoder-last-pipeline-num-layers", "9"]))
    assert (p.tp, p.pp, p.cp, p.ep, p.etp, p.sequence_parallel, p.pp_first_layers, p.pp_last_layers) == \
        (2, 3, 4, 5, 6, True, 7, 9)


@pytest.mark.parametrize(("tp", "sp"), [("1", False), ("2", True)])
def test_sequence_parallel_needs_tensor_parallelism(tp, sp):
    assert to_recipe._parallel(Flags(["--tensor-model-parallel-size", tp, "--sequence-parallel"])).sequence_parallel \
        is sp


@pytest.mark.parametrize(("argv", "job_per_node", "per_node"), [
    ([], None, 8), ([], 4, 4), (["--num-gpus-per-node", "2"], 4, 2), (["--num-gpus-per-node", "0"], None, 8),
])
def test_gpus_per_node_from_the_argv_else_the_job_else_eight(argv, job_per_node, per_node):
    placement = to_recipe._placement(Flags([*argv, "--colocate"]), _job(gpus_per_node=job_per_node))
    assert placement.num_gpus_per_node == per_node


def test_placement_defaults_and_stated_values():
    pl = to_recipe._placement(Flags(["--colocate"]), _job())
    assert (pl.actor_num_nodes, pl.actor_gpus_per_node, pl.colocate, pl.rollout_num_gpus,
            pl.rollout_gpus_per_engine) == (1, 8, True, None, 1)
    pl = to_recipe._placement(Flags(["--rollout-num-gpus", "4"]), _job())
    assert (pl.colocate, pl.rollout_num_gpus) == (False, 4)
    pl = to_recipe._placement(Flags(["--actor-num-nodes", "2", "--actor-num-gpus-per-node", "4", "--colocate",
                                     "--rollout-num-gpus", "6", "--rollout-num-gpus-per-engine", "2"]), _job())
    assert (pl.actor_num_nodes, pl.actor_gpus_per_node, pl.colocate, pl.rollout_num_gpus,
            pl.rollout_gpus_per_engine) == (2, 4, True, 6, 2)
    pl = to_recipe._placement(Flags(["--actor-num-nodes", "0", "--actor-num-gpus-per-node", "0",
                                     "--rollout-num-gpus-per-engine", "0", "--colocate"]), _job())
    assert (pl.actor_num_nodes, pl.actor_gpus_per_node, pl.rollout_gpus_per_engine) == (1, 8, 1)


# --- sglang_flags and train_args: what the Recipe carries besides its typed fields ------------------------------------

@pytest.mark.parametrize(("argv", "flags"), [
    (["--sglang-mem-fraction-static", "0.7", "--sglang-enable-dp-attention", "--sglang-x=1", "--sglang-y"],
     (("mem-fraction-static", "0.7"), ("enable-dp-attention", None), ("x", "1"), ("y", None))),
    (["--sglang-a", "1", "--sglang-a", "2", "--sglang-b="], (("a", "2"), ("b", ""))),
    (["--tp", "2", "-sglang-a", "1"], ()),
    (["--sglang-x", "5"], (("x", "5"),)),  # the value is the last word
    (["--sglang-load-format dummy"], ()),  # one token with a space: a value to argparse, no option
    (["--sglang-a", "--sglang-b c"], (("a", "--sglang-b c"),)),
    (["--sglang-a=b c"], (("a", "b c"),)),
])
def test_sglang_flags_keep_each_ones_last_value(argv, flags):
    assert to_recipe.sglang_flags(argv) == flags


def test_train_args_keep_the_flags_the_recipe_does_not_render_with_all_their_values():
    rendered = to_recipe.read(_job("python3", "train.py", "--rollout-batch-size", "4", "--colocate")).recipe
    argv = ["python3", "train.py", "--recompute-granularity=full", "--rollout-batch-size", "4", "--eval-x", "a", "b",
            "--colocate", "--moe-enable-deepep", "--tensor-model-parallel-size=2"]
    assert to_recipe.train_args(argv, rendered) == ("--recompute-granularity", "full", "--eval-x", "a", "b",
                                                    "--moe-enable-deepep")


# --- read: the whole Recipe ------------------------------------------------------------------------------------------

def test_read_a_known_launch():
    argv = ("python3", "/root/slime/train.py", *QWEN4B, "--rollout-batch-size", "32", "--n-samples-per-prompt", "8",
            "--rm-type", "remote_rm", "--rm-url", "http://rm:8000", "--hf-checkpoint", "/ckpt",
            "--sglang-mem-fraction-static", "0.6", "--optimizer-cpu-offload", "--recompute-granularity", "full",
            "--colocate")
    reading = to_recipe.read(_job(*argv, env=(("HF_TOKEN", "hf_x"), ("NCCL_DEBUG", "INFO")), framework="miles"))
    r = reading.recipe
    assert reading.missing == {}
    assert (r.id, r.model, r.reward, r.hf_checkpoint, r.sglang, r.env, r.train_script, r.framework,
            r.optimizer.cpu_offload) == ("job:run.sh", MODELS["Qwen3-4B"], Reward(rm_type="remote_rm",
                                                                                   rm_url="http://rm:8000"),
                                         "/ckpt", (("mem-fraction-static", "0.6"),), (("NCCL_DEBUG", "INFO"),),
                                         "/root/slime/train.py", "miles", True)
    assert r.extra_args == ("--recompute-granularity", "full")


def test_read_fills_the_rest_and_names_what_is_missing():
    reading = to_recipe.read(_job("python3", "train.py", "--colocate", framework="unknown"))
    r = reading.recipe
    assert (r.reward, r.hf_checkpoint, r.sglang, r.train_script, r.framework, r.optimizer.cpu_offload) == \
        (Reward(), "", (), "train.py", "slime", False)
    assert reading.missing == {
        Need.MODEL: NO_DIMS,
        Need.BATCH: "--rollout-batch-size is not in the argv"}
    assert list(reading.missing) == [Need.MODEL, Need.BATCH]
    # an argv of one word (no interpreter before the script) names that word as the script
    assert to_recipe.read(_job("--colocate")).recipe.train_script == "--colocate"
    assert to_recipe.read(_job("train.py", "--colocate")).recipe.train_script == "--colocate"


@pytest.mark.parametrize(("argv", "reward"), [
    (["--rm-type", "dapo"], Reward(rm_type="dapo")),
    (["--rm-type", "my_custom"], Reward()),  # a type SLIME's registry lacks (a custom function) judged as the default
    (["--rm-type", "remote_rm", "--rm-url", "http://x"], Reward(rm_type="remote_rm", rm_url="http://x")),
    (["--rm-url", "http://x"], Reward(rm_url="http://x")),
])
def test_read_the_reward(argv, reward):
    assert to_recipe.read(_job("python3", "train.py", "--colocate", *argv)).recipe.reward == reward


def test_read_refuses_values_slimes_parser_refuses():
    with pytest.raises(ValueError, match=r"^--rollout-max-prompt-len 'long': expected an integer$"):
        to_recipe.read(_job("python3", "train.py", "--colocate", "--rollout-max-prompt-len", "long"))
    with pytest.raises(ValueError, match="--recompute-granularity"):
        to_recipe.read(_job("python3", "train.py", "--colocate", "--recompute-granularity", "most"))


def test_read_names_the_terms_a_launch_asks_for_beside_its_model():
    reading = to_recipe.read(_job("python3", "train.py", "--colocate", "--rollout-batch-size", "4", *QWEN4B,
                                  "--train-backend", "fsdp", "--sglang-config=x.yaml"))
    assert reading.missing == {
        Need.TRAIN_MEMORY: "the launch asks for --train-backend fsdp (a training backend other than Megatron (the "
                           "estimate is Megatron's))",
        Need.ROLLOUT_MEMORY: "the launch asks for --sglang-config x.yaml (SGLang arguments from a file the launch "
                             "does not show)"}


def test_read_finds_a_shape_flag_written_with_its_value():
    """`--multimodal-keys={...}`: the option's name, not the token, decides that the model is not counted."""
    reading = to_recipe.read(_job("python3", "train.py", "--colocate", "--rollout-batch-size", "4",
                                  *[t for t in QWEN4B if t not in ("--rotary-base", "1000000")],
                                  "--multimodal-keys={}"))
    assert reading.recipe.model.name == "unknown"
    assert "--multimodal-keys {} (a vision-language model: the vision tower is not in the argv)" in \
        reading.missing[Need.MODEL]
