"""The checkpoint's config.json against the Megatron model args as a rule table (rlcheck/probes/recipe/hf_config.py):
each compared field on both sides, grouped-query and multi-latent attention, tied embeddings and transformers'
default, vision-language configs (text_config, or the language model's numbers at the top), `--flag=value` forms,
the collector's odd files, and every verdict with its whole summary, details and remedy."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.recipe.hf_config import HfConfigObservation, collect_hf_config, evaluate_hf_config, mismatches
from rlcheck.verdict import Status

REMEDY = catalog.get("model-config-mismatch").remedy
QWEN3_4B = {"vocab_size": 151936, "num_hidden_layers": 36, "hidden_size": 2560, "num_attention_heads": 32,
            "num_key_value_heads": 8, "tie_word_embeddings": True}
ARGS = ["--vocab-size", "151936", "--num-layers", "36", "--hidden-size", "2560", "--num-attention-heads", "32",
        "--group-query-attention", "--num-query-groups", "8"]
ALL = ["vocab_size", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
       "tie_word_embeddings"]
UNTIE = "--untie-embeddings-and-output-weights"


def _without(config: dict, *keys: str) -> dict:
    return {k: v for k, v in config.items() if k not in keys}


def _args(**values: str) -> list[str]:
    """ARGS with some flags' values replaced (by flag name without dashes: num_layers='28')."""
    out = list(ARGS)
    for name, value in values.items():
        out[out.index("--" + name.replace("_", "-")) + 1] = value
    return out


MISMATCHES = [
    (QWEN3_4B, ARGS, [], ALL),
    (QWEN3_4B, ["--vocab-size=151936", "--num-layers=36", "--hidden-size=2560", "--num-attention-heads=32",
                "--group-query-attention", "--num-query-groups=8"], [], ALL),
    (QWEN3_4B, ["--num-layers", "28", *ARGS], [], ALL),  # argparse keeps the last value
    ({k: str(v) for k, v in QWEN3_4B.items() if k != "tie_word_embeddings"}, ARGS, [], ALL),  # numbers as text
    # each field on both sides, alone
    (QWEN3_4B, _args(vocab_size="151552"), ["vocab_size 151936 in config.json vs --vocab-size 151552"], ALL),
    (QWEN3_4B, _args(num_layers="35"), ["num_hidden_layers 36 in config.json vs --num-layers 35"], ALL),
    (QWEN3_4B, _args(hidden_size="4096"), ["hidden_size 2560 in config.json vs --hidden-size 4096"], ALL),
    (QWEN3_4B, _args(num_attention_heads="16"),
     ["num_attention_heads 32 in config.json vs --num-attention-heads 16"], ALL),
    (QWEN3_4B, _args(num_query_groups="4"), ["num_key_value_heads 8 in config.json vs --num-query-groups 4"], ALL),
    # several at once, in the table's order
    (QWEN3_4B, _args(hidden_size="4096", vocab_size="1", num_query_groups="1"),
     ["vocab_size 151936 in config.json vs --vocab-size 1", "hidden_size 2560 in config.json vs --hidden-size 4096",
      "num_key_value_heads 8 in config.json vs --num-query-groups 1"], ALL),
    # a field is compared only when both sides have it
    ({}, [], [], ["tie_word_embeddings"]),
    ({}, ARGS, [], ["tie_word_embeddings"]),
    (QWEN3_4B, [], [], ["tie_word_embeddings"]),
    (_without(QWEN3_4B, "vocab_size", "hidden_size"), ARGS, [],
     ["num_hidden_layers", "num_attention_heads", "num_key_value_heads", "tie_word_embeddings"]),
    (QWEN3_4B, ["--hidden-size", "2560"], [], ["hidden_size", "tie_word_embeddings"]),
    # grouped-query attention: --num-query-groups defaults to 1 in Megatron (multi-query attention)
    ({"num_key_value_heads": 8}, ["--group-query-attention"],
     ["num_key_value_heads 8 in config.json vs --num-query-groups not given (Megatron's default 1)"],
     ["num_key_value_heads", "tie_word_embeddings"]),
    ({"num_key_value_heads": 1}, ["--group-query-attention"], [], ["num_key_value_heads", "tie_word_embeddings"]),
    (_without(QWEN3_4B, "num_key_value_heads"), ARGS, [],
     ["vocab_size", "num_hidden_layers", "hidden_size", "num_attention_heads", "tie_word_embeddings"]),
    # without --group-query-attention Megatron builds one KV head per attention head (--num-query-groups unused)
    ({"num_attention_heads": 32, "num_key_value_heads": 32}, ["--num-attention-heads", "32"], [],
     ["num_attention_heads", "num_key_value_heads", "tie_word_embeddings"]),
    ({"num_key_value_heads": 8}, ["--num-attention-heads", "32", "--num-query-groups", "8"],
     ["num_key_value_heads 8 in config.json but no --group-query-attention (Megatron builds one KV head per "
      "attention head)"], ["num_key_value_heads", "tie_word_embeddings"]),
    ({"num_key_value_heads": 8}, ["--num-attention-heads=8"], [], ["num_key_value_heads", "tie_word_embeddings"]),
    ({"num_key_value_heads": 8}, [], [], ["tie_word_embeddings"]),  # no head count given: nothing to compare with
    # multi-latent attention (DeepSeek): num_key_value_heads says nothing about Megatron's heads
    ({"num_key_value_heads": 128, "kv_lora_rank": 512}, ["--num-attention-heads", "128", "--multi-latent-attention"],
     [], ["tie_word_embeddings"]),
    ({"num_key_value_heads": 128, "kv_lora_rank": 512}, ["--num-attention-heads", "64"], [], ["tie_word_embeddings"]),
    # tied embeddings: transformers' default is tied; the top level wins over text_config
    ({"tie_word_embeddings": False}, [],
     ["tie_word_embeddings false in config.json vs no --untie-embeddings-and-output-weights"],
     ["tie_word_embeddings"]),
    ({}, [UNTIE], ["tie_word_embeddings true in config.json vs --untie-embeddings-and-output-weights"],
     ["tie_word_embeddings"]),
    ({"tie_word_embeddings": False}, [UNTIE], [], ["tie_word_embeddings"]),
    ({"tie_word_embeddings": True}, [], [], ["tie_word_embeddings"]),
    ({"tie_word_embeddings": None}, [UNTIE], [], ["tie_word_embeddings"]),
    ({"tie_word_embeddings": 0}, [UNTIE], [], ["tie_word_embeddings"]),
    ({"text_config": {"tie_word_embeddings": False}}, [UNTIE], [], ["tie_word_embeddings"]),
    ({"tie_word_embeddings": True, "text_config": {"tie_word_embeddings": False}}, [UNTIE],
     ["tie_word_embeddings true in config.json vs --untie-embeddings-and-output-weights"], ["tie_word_embeddings"]),
    # vision-language: the language model's numbers under text_config (Qwen3-VL, LLaVA) ...
    ({"text_config": _without(QWEN3_4B, "tie_word_embeddings"), "vision_config": {"hidden_size": 1152},
      "tie_word_embeddings": True}, ARGS, [], ALL),
    ({"text_config": _without(QWEN3_4B, "tie_word_embeddings"), "hidden_size": 1152}, _args(hidden_size="1152"),
     ["hidden_size 2560 in config.json vs --hidden-size 1152"], ALL),
    # ... or at the top beside a text_config (Qwen2.5-VL): then the top is the language model
    ({**QWEN3_4B, "text_config": {"num_hidden_layers": 99, "hidden_size": 1}}, ARGS, [], ALL),
    ({**_without(QWEN3_4B, "hidden_size"), "text_config": {"hidden_size": 2560}}, _args(hidden_size="1"), [],
     ["vocab_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "tie_word_embeddings"]),
    ({**QWEN3_4B, "text_config": None}, ARGS, [], ALL),
    ({"text_config": ["num_hidden_layers"], "num_attention_heads": 32}, ARGS, [],
     ["num_attention_heads", "tie_word_embeddings"]),
]


@pytest.mark.parametrize(("config", "argv", "diff", "compared"), MISMATCHES)
def test_rules_table_hf_config_mismatches(config, argv, diff, compared):
    assert mismatches(config, argv) == (diff, compared)


PATH = "/models/Qwen3-4B/config.json"
VERDICTS = [
    (HfConfigObservation(path=PATH, config=QWEN3_4B), ARGS, Status.PASS,
     f"run-a: vocab_size, num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, "
     f"tie_word_embeddings of {PATH} match the model args", ""),
    (HfConfigObservation(path=PATH, config={}), [], Status.PASS,
     f"run-a: tie_word_embeddings of {PATH} match the model args", ""),
    (HfConfigObservation(path=PATH, config=QWEN3_4B), _args(num_layers="28", num_query_groups="4"), Status.FAIL,
     f"run-a: the model args disagree with {PATH}: num_hidden_layers 36 in config.json vs --num-layers 28; "
     "num_key_value_heads 8 in config.json vs --num-query-groups 4", REMEDY),
    (HfConfigObservation(path=PATH, config={"tie_word_embeddings": False}), [], Status.FAIL,
     f"run-a: the model args disagree with {PATH}: tie_word_embeddings false in config.json vs no "
     "--untie-embeddings-and-output-weights", REMEDY),
    (HfConfigObservation(path="", error="the argv has no --hf-checkpoint"), ARGS, Status.UNKNOWN,
     "run-a: cannot read --hf-checkpoint (the argv has no --hf-checkpoint): the model args are not compared with the "
     "checkpoint; run where the checkpoint path is mounted", ""),
    (HfConfigObservation(path=PATH, error="not a JSON object"), ARGS, Status.UNKNOWN,
     f"run-a: cannot read {PATH} (not a JSON object): the model args are not compared with the checkpoint; run where "
     "the checkpoint path is mounted", ""),
    (HfConfigObservation(path=PATH, error="/models/Qwen3-4B does not exist on this machine", not_here=True), ARGS,
     Status.SKIP, "run-a: the checkpoint is not on this machine (/models/Qwen3-4B does not exist on this machine): "
                  "the model args are compared with its config.json where the path is mounted (the launch host)", ""),
]


@pytest.mark.parametrize(("obs", "argv", "status", "summary", "remedy"), VERDICTS)
def test_rules_table_hf_config_verdicts(obs, argv, status, summary, remedy):
    verdict = evaluate_hf_config(obs, argv, "run-a")
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (status, summary, "", remedy)
    assert verdict.failure_id == "model-config-mismatch"


@pytest.mark.parametrize(("argv", "expected"), [
    ([], HfConfigObservation(path="", error="the argv has no --hf-checkpoint")),
    (["--hf-checkpoint="], HfConfigObservation(path="", error="the argv has no --hf-checkpoint")),
    (["--hf-checkpoint"], HfConfigObservation(path="", error="the argv has no --hf-checkpoint")),
])
def test_rules_table_hf_config_collect_without_a_checkpoint(argv, expected):
    assert collect_hf_config(argv) == expected


def _written(tmp_path, content: bytes | None, *, folder: bool = True) -> tuple[str, str]:
    root = tmp_path / "ckpt"
    if folder:
        root.mkdir()
        if content is not None:
            (root / "config.json").write_bytes(content)
    else:
        root.write_bytes(b"{}")  # the checkpoint path is a file
    return str(root), str(root / "config.json")


@pytest.mark.parametrize(("content", "folder", "config", "error"), [
    (b'{"hidden_size": 2560, "_name_or_path": "Qwen/Qwen3-4B \xe2\x80\x93 caf\xc3\xa9"}', True,
     {"hidden_size": 2560, "_name_or_path": "Qwen/Qwen3-4B \u2013 caf\u00e9"}, ""),
    (b"{}", True, {}, ""),
    (b"[1, 2]", True, None, "not a JSON object"),
    (b'"text"', True, None, "not a JSON object"),
    (b"null", True, None, "not a JSON object"),
    (b"", True, None, "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
    (b'{"a": "\xff"}', True, None,
     "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte"),
    (None, True, None, "FileNotFoundError: [Errno 2] No such file or directory: '{path}'"),
    (None, False, None, "NotADirectoryError: [Errno 20] Not a directory: '{path}'"),
])
def test_rules_table_hf_config_collect_reads_the_file(tmp_path, content, folder, config, error):
    root, path = _written(tmp_path, content, folder=folder)
    found = collect_hf_config(["--hf-checkpoint", root, "--num-layers", "36"])
    assert found == HfConfigObservation(path=path, config=config, error=error.format(path=path))


def test_rules_table_hf_config_collect_skips_a_checkpoint_not_mounted_here(tmp_path):
    root = tmp_path / "absent"
    assert collect_hf_config([f"--hf-checkpoint={root}"]) == HfConfigObservation(
        path=str(root / "config.json"), error=f"{root} does not exist on this machine", not_here=True)
