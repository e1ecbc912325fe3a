"""The prompt + response caps against the engine's context as rule tables (rlcheck/probes/recipe/context_length.py):
how SGLang derives a checkpoint's context (each key in its order, a vision-language model's text_config, rope
scaling and the spellings that cancel it, SGLang's default), where the engine's context comes from, and each
verdict on both sides of its boundary, with whole summaries."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.recipe.context_length import (
    CONTEXT_KEYS,
    FAILURE_ID,
    SGLANG_DEFAULT_CONTEXT,
    derived_context,
    evaluate_context_length,
)
from rlcheck.probes.recipe.hf_config import HfConfigObservation
from rlcheck.verdict import Status

REMEDY = catalog.get(FAILURE_ID).remedy
PATH = "/ckpt/config.json"
DEFAULT_HOW = ("SGLang's default (no max_sequence_length, seq_length, max_seq_len, model_max_length, "
               "max_position_embeddings)")


@pytest.mark.parametrize(("config", "context", "how"), [
    ({}, 2048, DEFAULT_HOW),
    ({"max_position_embeddings": 40960}, 40960, "max_position_embeddings 40960"),
    ({"model_max_length": 8192, "max_position_embeddings": 40960}, 8192, "model_max_length 8192"),
    ({"max_seq_len": 7, "model_max_length": 8}, 7, "max_seq_len 7"),
    ({"seq_length": 6, "max_seq_len": 7}, 6, "seq_length 6"),
    ({"max_sequence_length": 5, "seq_length": 6}, 5, "max_sequence_length 5"),
    # a key that is not an int is passed over, not read
    ({"max_sequence_length": "8192", "max_position_embeddings": 4096}, 4096, "max_position_embeddings 4096"),
    ({"max_position_embeddings": 4096.0}, 2048, DEFAULT_HOW),
    ({"max_position_embeddings": None, "unrelated": 99}, 2048, DEFAULT_HOW),
    # vision-language checkpoints keep the language model's numbers under text_config
    ({"text_config": {"max_position_embeddings": 128000}, "max_position_embeddings": 1}, 128000,
     "max_position_embeddings 128000"),
    ({"text_config": {"vocab_size": 5}, "max_position_embeddings": 1}, 2048, DEFAULT_HOW),
    ({"text_config": "qwen2", "max_position_embeddings": 10}, 10, "max_position_embeddings 10"),
    ({"text_config": None, "seq_length": 11}, 11, "seq_length 11"),
    # rope scaling multiplies, unless it names its original length or is llama3's
    ({"max_position_embeddings": 32768, "rope_scaling": {"factor": 4, "rope_type": "yarn"}}, 131072,
     "max_position_embeddings 32768 x rope factor 4"),
    ({"max_position_embeddings": 32768, "rope_scaling": {"factor": 4.0, "type": "yarn"}}, 131072,
     "max_position_embeddings 32768 x rope factor 4.0"),
    ({"max_position_embeddings": 4096, "rope_scaling": {"factor": 0.5}}, 2048,
     "max_position_embeddings 4096 x rope factor 0.5"),
    ({"max_position_embeddings": 32768, "rope_scaling": {"factor": 4, "original_max_position_embeddings": 8192}},
     32768, "max_position_embeddings 32768"),
    ({"max_position_embeddings": 131072, "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}}, 131072,
     "max_position_embeddings 131072"),
    ({"max_position_embeddings": 100, "rope_scaling": {"factor": 8.0, "type": "llama3"}}, 800,
     "max_position_embeddings 100 x rope factor 8.0"),  # 'type' is not 'rope_type': llama3 is not named
    ({"max_position_embeddings": 100, "rope_scaling": {"rope_type": "linear"}}, 100, "max_position_embeddings 100"),
    ({"max_position_embeddings": 100, "rope_scaling": {"factor": 1}}, 100, "max_position_embeddings 100"),
    ({"max_position_embeddings": 100, "rope_scaling": None}, 100, "max_position_embeddings 100"),
    ({"max_position_embeddings": 100, "rope_scaling": [2]}, 100, "max_position_embeddings 100"),
    # the language model's own scaling, not the outer config's
    ({"text_config": {"max_position_embeddings": 1000, "rope_scaling": {"factor": 2}}}, 2000,
     "max_position_embeddings 1000 x rope factor 2"),
    ({"text_config": {"max_position_embeddings": 1000}, "rope_scaling": {"factor": 2}}, 1000,
     "max_position_embeddings 1000"),
])
def test_rules_table_context_length_derived(config, context, how):
    assert derived_context(config) == (context, how)


def test_rules_table_context_length_keys_are_sglangs_in_its_order():
    assert CONTEXT_KEYS == ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                            "max_position_embeddings")
    assert SGLANG_DEFAULT_CONTEXT == 2048


def _verdict(*argv: str, config: dict | None = None, error: str = "", not_here: bool = False):
    obs = HfConfigObservation(path=PATH, config=config, error=error, not_here=not_here)
    return evaluate_context_length(obs, list(argv), "job")


CFG = {"max_position_embeddings": 4096}
FROM_CFG = f"max_position_embeddings 4096 in {PATH}"


@pytest.mark.parametrize(("argv", "status", "summary"), [
    # no response cap
    (("--rollout-max-prompt-len", "4095"), Status.PASS,
     "--rollout-max-prompt-len 4095 and no response cap (SGLang ends a response at its context) fits"),
    (("--rollout-max-prompt-len", "4096"), Status.WARN,
     "--rollout-max-prompt-len 4096 and no response cap: a prompt as long as the context is refused against"),
    ((), Status.WARN, "prompts are not capped and no response cap: a prompt as long as the context is refused against"),
    (("--rollout-max-context-len", "4096"), Status.PASS,
     "--rollout-max-context-len - 1 = 4095 (SLIME's prompt filter) and no response cap (SGLang ends a response at "
     "its context) fits"),
    (("--rollout-max-context-len", "4097"), Status.WARN,
     "--rollout-max-context-len - 1 = 4096 (SLIME's prompt filter) and no response cap: a prompt as long as the "
     "context is refused against"),
    # a response cap alone
    (("--rollout-max-response-len", "4095"), Status.WARN,
     "--rollout-max-prompt-len is not set: a prompt of 2 tokens or more plus --rollout-max-response-len 4095 is "
     "refused against"),
    (("--rollout-max-response-len", "4096"), Status.FAIL,
     "--rollout-max-response-len 4096 alone leaves no room for a prompt against"),
    # both caps, on each side of the context
    (("--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "3072"), Status.PASS,
     "--rollout-max-prompt-len 1024 + --rollout-max-response-len 3072 = 4096 tokens fits"),
    (("--rollout-max-prompt-len", "1025", "--rollout-max-response-len", "3072"), Status.FAIL,
     "--rollout-max-prompt-len 1025 + --rollout-max-response-len 3072 = 4097 tokens against"),
    # a prompt cap implied by the context cap is a filter nobody sized for the response: WARN
    (("--rollout-max-context-len", "1025", "--rollout-max-response-len", "3072"), Status.PASS,
     "--rollout-max-context-len - 1 = 1024 (SLIME's prompt filter) + --rollout-max-response-len 3072 = 4096 tokens "
     "fits"),
    (("--rollout-max-context-len", "1026", "--rollout-max-response-len", "3072"), Status.WARN,
     "--rollout-max-context-len - 1 = 1025 (SLIME's prompt filter) + --rollout-max-response-len 3072 = 4097 tokens "
     "against"),
    # an explicit prompt cap wins over the context cap
    (("--rollout-max-context-len", "9000", "--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "3073"),
     Status.FAIL, "--rollout-max-prompt-len 1024 + --rollout-max-response-len 3073 = 4097 tokens against"),
])
def test_rules_table_context_length_caps(argv, status, summary):
    verdict = _verdict(*argv, config=CFG)
    assert verdict.status is status
    assert verdict.summary == f"job: {summary} the engine's context of 4096 tokens ({FROM_CFG})"
    assert verdict.remedy == ("" if status is Status.PASS else REMEDY)
    assert verdict.failure_id == FAILURE_ID


@pytest.mark.parametrize(("argv", "status", "tail"), [
    (("--rollout-max-prompt-len", "1025", "--rollout-max-response-len", "3072", "--sglang-allow-auto-truncate"),
     Status.WARN, "; --sglang-allow-auto-truncate cuts such responses short instead"),
    (("--rollout-max-response-len", "4096", "--sglang-allow-auto-truncate"), Status.WARN,
     "; --sglang-allow-auto-truncate cuts such responses short instead"),
    # only a FAIL is softened: a WARN stays as it was, without the note
    (("--rollout-max-context-len", "1026", "--rollout-max-response-len", "3072", "--sglang-allow-auto-truncate"),
     Status.WARN, ""),
    (("--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "3072", "--sglang-allow-auto-truncate"),
     Status.PASS, ""),
])
def test_rules_table_context_length_auto_truncate(argv, status, tail):
    verdict = _verdict(*argv, config=CFG)
    assert verdict.status is status and verdict.summary.endswith(f"({FROM_CFG}){tail}")
    assert verdict.remedy == ("" if status is Status.PASS else REMEDY)


@pytest.mark.parametrize(("argv", "summary"), [
    (("--sglang-context-length", "8192", "--rollout-max-prompt-len", "4096", "--rollout-max-response-len", "4096"),
     "job: --rollout-max-prompt-len 4096 + --rollout-max-response-len 4096 = 8192 tokens fits the engine's context "
     "of 8192 tokens (--sglang-context-length 8192)"),
    (("--sglang-context-length=4096", "--rollout-max-prompt-len", "1", "--rollout-max-response-len", "4095"),
     "job: --rollout-max-prompt-len 1 + --rollout-max-response-len 4095 = 4096 tokens fits the engine's context "
     "of 4096 tokens (--sglang-context-length 4096)"),
])
def test_rules_table_context_length_given_context_wins_over_config(argv, summary):
    for config in (CFG, None, {"max_position_embeddings": 1}):  # read or not, the flag decides
        verdict = _verdict(*argv, config=config, error="unreadable")
        assert (verdict.status, verdict.summary) == (Status.PASS, summary)


@pytest.mark.parametrize(("argv", "summary"), [
    (("--sglang-context-length", "0"), "job: --sglang-context-length '0': a positive integer of tokens"),
    (("--sglang-context-length", "4k"), "job: --sglang-context-length '4k': a positive integer of tokens"),
    (("--rollout-max-response-len", "-1"), "job: --rollout-max-response-len '-1': a positive integer of tokens"),
    (("--rollout-max-prompt-len", "1.5"), "job: --rollout-max-prompt-len '1.5': a positive integer of tokens"),
    (("--rollout-max-context-len", ""), "job: --rollout-max-context-len '': a positive integer of tokens"),
])
def test_rules_table_context_length_bad_numbers_fail_naming_the_flag(argv, summary):
    verdict = _verdict(*argv, config=CFG)
    assert (verdict.status, verdict.summary, verdict.remedy) == (Status.FAIL, summary, REMEDY)
    assert verdict.failure_id == FAILURE_ID


def test_rules_table_context_length_checkpoint_elsewhere_or_unreadable():
    skip = _verdict("--rollout-max-response-len", "1", error="/ckpt does not exist on this machine", not_here=True)
    assert skip.status is Status.SKIP and skip.remedy == "" and skip.failure_id == FAILURE_ID
    assert skip.summary == ("job: no --sglang-context-length and the checkpoint is not on this machine (/ckpt does not "
                            "exist on this machine): judged where it is mounted")
    unknown = _verdict("--rollout-max-response-len", "1", error="JSONDecodeError: x")
    assert unknown.status is Status.UNKNOWN and unknown.remedy == "" and unknown.failure_id == FAILURE_ID
    assert unknown.summary == ("job: no --sglang-context-length and cannot read the checkpoint's config.json "
                               "(JSONDecodeError: x): the engine's context is unknown")
    # a bad cap is named even when the checkpoint cannot be read
    bad = _verdict("--rollout-max-response-len", "x", error="gone", not_here=True)
    assert bad.status is Status.FAIL and "--rollout-max-response-len 'x'" in bad.summary


def test_rules_table_context_length_vision_language_checkpoint():
    config = {"architectures": ["Qwen2_5_VLForConditionalGeneration"],
              "text_config": {"max_position_embeddings": 128000, "rope_scaling": {"type": "mrope", "factor": 1}},
              "vision_config": {"max_position_embeddings": 1024}}
    verdict = _verdict("--rollout-max-prompt-len", "64000", "--rollout-max-response-len", "64000", config=config)
    assert verdict.status is Status.PASS
    assert verdict.summary.endswith(f"of 128000 tokens (max_position_embeddings 128000 in {PATH})")
