"""The dynamic-batch cap against the longest sample, and config.json against the model args: every branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcheck.probes.recipe import hf_config, sample_caps
from rlcheck.verdict import Status, Verdict

CONFIGS = Path(__file__).resolve().parents[2] / "data" / "hf_config"
DYN = ["--use-dynamic-batch-size", "--max-tokens-per-gpu", "8192"]
QWEN3_4B_ARGS = ["--vocab-size", "151936", "--num-layers", "36", "--hidden-size", "2560", "--num-attention-heads",
                 "32", "--group-query-attention", "--num-query-groups", "8"]


def _caps(*args: str) -> Verdict:
    return sample_caps.evaluate_sample_caps(list(args), "job")


@pytest.mark.parametrize(("args", "status"), [
    ((*DYN, "--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "7168"), Status.PASS),
    ((*DYN, "--rollout-max-prompt-len", "1025", "--rollout-max-response-len", "7168"), Status.WARN),
    # the context cap is SLIME's prompt filter (context - 1), not a cap on prompt + response
    ((*DYN, "--context-parallel-size", "2", "--rollout-max-context-len", "8193", "--rollout-max-response-len",
      "8192"), Status.PASS),
    ((*DYN, "--context-parallel-size", "2", "--rollout-max-context-len", "8194", "--rollout-max-response-len",
      "8192"), Status.WARN),
    ((*DYN, "--rollout-max-context-len=4097", "--rollout-max-response-len", "4096"), Status.PASS),
    ((*DYN, "--rollout-max-context-len=4098", "--rollout-max-response-len", "4096"), Status.WARN),
    # a context cap within the token cap, but the response cap on top of it is not
    ((*DYN, "--rollout-max-context-len=8192", "--rollout-max-response-len", "1"), Status.PASS),
    ((*DYN, "--rollout-max-context-len=8192", "--rollout-max-response-len", "2"), Status.WARN),
    ((*DYN, "--rollout-max-context-len=8192"), Status.WARN),
    # an explicit prompt cap wins over the context cap's default
    ((*DYN, "--rollout-max-context-len", "65536", "--rollout-max-prompt-len", "4096", "--rollout-max-response-len",
      "4096"), Status.PASS),
    ((*DYN, "--disable-rollout-global-dataset", "--rollout-max-prompt-len", "1024", "--rollout-max-response-len",
      "1024"), Status.WARN),
    ((*DYN, "--rollout-max-response-len", "4096"), Status.WARN),
    ((*DYN,), Status.WARN),
    (("--use-dynamic-batch-size", "--rollout-max-response-len", "4096"), Status.FAIL),
    ((*DYN, "--rollout-max-response-len", "-5"), Status.FAIL),
    (("--micro-batch-size", "1", "--rollout-max-response-len", "65536"), Status.SKIP),
])
def test_sample_caps_boundaries(args, status):
    verdict = _caps(*args)
    assert verdict.status is status, verdict.summary
    assert verdict.failure_id == "cuda-oom"
    assert (verdict.remedy != "") == (status in (Status.WARN, Status.FAIL))


def test_sample_caps_names_what_is_wrong():
    over = _caps(*DYN, "--rollout-max-context-len", "8192", "--rollout-max-response-len", "8192").summary
    assert "exceeds the cap of 8192" in over and "--rollout-max-context-len 8192 - 1" in over and "16383" in over
    assert "filters no prompt" in _caps(*DYN, "--disable-rollout-global-dataset", "--rollout-max-prompt-len", "1",
                                        "--rollout-max-response-len", "1").summary
    assert "--rollout-max-prompt-len is not set" in _caps(*DYN, "--rollout-max-response-len", "4096").summary
    assert "response cap alone is 4.00x" in _caps(*DYN, "--rollout-max-response-len", "32768").summary
    assert "--rollout-max-response-len is not set" in _caps(*DYN).summary
    assert "SLIME asserts" in _caps("--use-dynamic-batch-size").summary
    assert "'-5': a positive integer" in _caps(*DYN, "--rollout-max-response-len", "-5").summary


@pytest.mark.parametrize(("args", "status"), [
    ((*DYN, "--rollout-max-context-len", "8192", "--rollout-max-response-len", "8192"), Status.PASS),
    ((*DYN, "--rollout-max-context-len", "8193", "--rollout-max-response-len", "8192"), Status.WARN),
    ((*DYN, "--rollout-max-context-len", "8192"), Status.PASS),
    ((*DYN, "--rollout-max-context-len", "65536", "--rollout-max-prompt-len", "4096", "--rollout-max-response-len",
      "4096"), Status.PASS),
    ((*DYN, "--rollout-max-context-len", "65536", "--rollout-max-prompt-len", "4096", "--rollout-max-response-len",
      "4097"), Status.WARN),
    ((*DYN, "--rollout-max-response-len", "4096"), Status.WARN),
])
def test_sample_caps_on_miles_the_context_cap_bounds_the_sample(args, status):
    verdict = sample_caps.evaluate_sample_caps(list(args), "job", "miles")
    assert verdict.status is status, verdict.summary


def test_option_takes_the_last_value_in_either_form():
    assert sample_caps.option(["--x", "1", "--x=2"], "--x") == "2"
    assert sample_caps.option(["--x=2", "--x", "3"], "--x") == "3"
    assert sample_caps.option(["--xy", "1", "--x"], "--x") is None


def _judge(name: str, args: list[str]) -> Verdict:
    obs = hf_config.collect_hf_config(["--hf-checkpoint", str(CONFIGS / name), *args])
    return hf_config.evaluate_hf_config(obs, args, "job")


def test_matching_config_passes_and_lists_what_it_compared():
    verdict = _judge("qwen3-4b", QWEN3_4B_ARGS)
    assert verdict.status is Status.PASS, verdict.summary
    for key in ("vocab_size", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                "tie_word_embeddings"):
        assert key in verdict.summary


def test_another_model_of_the_family_fails_naming_each_difference():
    verdict = _judge("qwen3-8b", QWEN3_4B_ARGS)
    assert verdict.status is Status.FAIL and verdict.failure_id == "model-config-mismatch" and verdict.remedy
    assert "hidden_size 4096 in config.json vs --hidden-size 2560" in verdict.summary
    assert "tie_word_embeddings false in config.json vs no --untie-embeddings-and-output-weights" in verdict.summary
    assert "num_hidden_layers" not in verdict.summary


@pytest.mark.parametrize(("args", "needle"), [
    ([a if a != "151936" else "151552" for a in QWEN3_4B_ARGS], "vocab_size 151936 in config.json vs --vocab-size"),
    ([a if a != "36" else "28" for a in QWEN3_4B_ARGS], "num_hidden_layers 36"),
    ([*QWEN3_4B_ARGS[:-1], "4"], "num_key_value_heads 8 in config.json vs --num-query-groups 4"),
    ([a for a in QWEN3_4B_ARGS if a not in ("--group-query-attention", "--num-query-groups", "8")],
     "no --group-query-attention"),
    ([*QWEN3_4B_ARGS, "--untie-embeddings-and-output-weights"], "tie_word_embeddings true in config.json vs "
                                                                "--untie-embeddings-and-output-weights"),
])
def test_each_field_mismatch_fails(args, needle):
    verdict = _judge("qwen3-4b", args)
    assert verdict.status is Status.FAIL and needle in verdict.summary, verdict.summary


def test_moe_config_with_untied_embeddings_passes():
    args = ["--vocab-size", "151936", "--num-layers", "48", "--hidden-size", "2048", "--num-attention-heads", "32",
            "--group-query-attention", "--num-query-groups", "4", "--untie-embeddings-and-output-weights"]
    assert _judge("qwen3-30b-a3b", args).status is Status.PASS


def test_multimodal_config_is_read_from_text_config():
    assert _judge("vl-text-config", QWEN3_4B_ARGS).status is Status.PASS
    wrong = [a if a != "2560" else "4096" for a in QWEN3_4B_ARGS]
    assert "hidden_size 2560" in _judge("vl-text-config", wrong).summary


def test_absent_tie_key_is_transformers_default_tied(tmp_path):
    config = json.loads((CONFIGS / "qwen3-4b" / "config.json").read_text())
    del config["tie_word_embeddings"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    obs = hf_config.collect_hf_config(["--hf-checkpoint", str(tmp_path)])
    assert hf_config.evaluate_hf_config(obs, QWEN3_4B_ARGS, "job").status is Status.PASS
    untied = hf_config.evaluate_hf_config(obs, [*QWEN3_4B_ARGS, "--untie-embeddings-and-output-weights"], "job")
    assert untied.status is Status.FAIL


@pytest.mark.parametrize(("argv", "needle"), [
    (["--num-layers", "36"], "cannot read --hf-checkpoint (the argv has no --hf-checkpoint)"),
    (["--hf-checkpoint", str(CONFIGS / "no-config")], "no-config/config.json (FileNotFoundError"),
    (["--hf-checkpoint", str(CONFIGS / "broken")], "broken/config.json (JSONDecodeError"),
])
def test_unreadable_config_is_unknown_naming_the_path(argv, needle):
    verdict = hf_config.evaluate_hf_config(hf_config.collect_hf_config(argv), argv, "job")
    assert verdict.status is Status.UNKNOWN and needle in verdict.summary, verdict.summary


def test_checkpoint_not_mounted_here_is_skip_naming_the_path():
    argv = ["--hf-checkpoint", str(CONFIGS / "absent")]
    verdict = hf_config.evaluate_hf_config(hf_config.collect_hf_config(argv), argv, "job")
    assert verdict.status is Status.SKIP, verdict.summary
    assert f"{CONFIGS / 'absent'} does not exist on this machine" in verdict.summary


def test_a_config_that_is_not_an_object_is_unknown(tmp_path):
    (tmp_path / "config.json").write_text("[1, 2]")
    obs = hf_config.collect_hf_config(["--hf-checkpoint", str(tmp_path)])
    assert obs.config is None and obs.error == "not a JSON object"
