"""Megatron options a SLIME image adds by patch are judged as that image's parser will: accepted under each SLIME
schema, unknown where no patch adds them, and read from a patch by the rule (add_argument lines, TransformerConfig
fields) on both sides."""

from __future__ import annotations

import textwrap

import pytest

from rlcheck.framework import argv as fa
from rlcheck.framework.patch_flags import CONFIG_FILE, patch_options
from rlcheck.framework.schema import load

PATCH_FLAGS = ("--use-gated-attention", "--post-self-attn-layernorm", "--post-mlp-layernorm")


@pytest.mark.parametrize("schema", ["slime-v0.2.4", "slime-v0.3.1", "slime-main"])
@pytest.mark.parametrize("flag", PATCH_FLAGS)
def test_patch_flags_are_options_of_every_slime_image(schema, flag):
    """SLIME's Qwen3-Next, GLM-4 and Qwen3.5 scripts pass them; SLIME's image parser knows them."""
    assert fa.judge(["--num-layers", "48", flag], load(schema))[0] == []


def test_patch_flags_are_not_megatron_releases_own():
    """Miles' schema carries no SLIME patch: there the same flag is unknown (and Miles' parser is strict)."""
    [finding] = fa.judge(["--use-gated-attention"], load("miles-main"))[0]
    assert finding.problem == "unknown"


def _diff(path: str, *added: str) -> str:
    body = "\n".join(f"+{line}" for line in added)
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,2 @@\n{body}\n"


@pytest.mark.parametrize(("path", "line", "flags"), [
    ("megatron/training/arguments.py", "    group.add_argument('--use-gated-attention', action='store_true',",
     {"--use-gated-attention": "store_true"}),
    ("megatron/training/arguments.py", '    group.add_argument("--moe-extra", type=int, default=2)',
     {"--moe-extra": "int"}),
    ("megatron/training/arguments.py", "    group.add_argument('--tag')", {"--tag": "str"}),
    (CONFIG_FILE, "    post_mlp_layernorm: bool = False", {"--post-mlp-layernorm": "store_true"}),
    (CONFIG_FILE, "    index_topk: Optional[int] = None", {"--index-topk": "int"}),
    (CONFIG_FILE, "    scale: float | None = None", {"--scale": "float"}),
    # near misses: a field of another file, a type no command line carries, a removed or context line
    ("megatron/core/transformer/transformer_layer.py", "    post_mlp_layernorm: bool = False", {}),
    (CONFIG_FILE, "    post_mlp_layernorm: Union[ModuleSpec, type] = IdentityOp", {}),
    (CONFIG_FILE, "        local_name: bool = False", {}),
])
def test_patch_options_by_rule(path, line, flags):
    got = {o["flags"][0]: o["kind"] for o in patch_options(_diff(path, line))}
    assert got == flags


def test_patch_options_skip_removed_and_context_lines():
    text = textwrap.dedent(f"""\
        +++ b/{CONFIG_FILE}
        -    gone_field: bool = False
             kept_field: bool = False
        -    parser.add_argument('--gone', action='store_true')
        """)
    assert patch_options(text) == []


@pytest.mark.parametrize("schema", ["slime-v0.2.4", "slime-v0.3.1", "slime-main", "miles-main"])
def test_required_option_missing_fails_as_the_parser_exits(schema):
    """A launch missing a line continuation passes only its first options to train.py: SLIME's and Miles' parsers
    exit on the required --rollout-batch-size; given once (also as --flag=value), nothing is missing."""
    truncated = ["python3", "train.py", "--actor-num-nodes", "2", "--colocate"]
    findings = fa.judge(truncated, load(schema))[0]
    assert [(f.flag, f.problem) for f in findings] == [("--rollout-batch-size", "missing")]
    verdict = fa.evaluate(truncated, load(schema), "test")
    assert verdict.status.value == "FAIL" and "--rollout-batch-size is required" in verdict.summary
    for given in (["--rollout-batch-size", "32"], ["--rollout-batch-size=32"]):
        assert fa.judge([*truncated, *given], load(schema))[0] == []
