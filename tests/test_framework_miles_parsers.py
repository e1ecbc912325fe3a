"""Miles' options outside its own add_argument literals, judged as Miles' parser reads them: the Megatron branch its
image builds (YaRN, the MoE router freezes), the FSDP backend's parser (one option per FSDPArgs field, only with
--train-backend fsdp) and a custom generate function's add_arguments (only with that --custom-generate-function-path).
Each accepted where Miles accepts it; misspelt, or given without what adds it, it still FAILs."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from rlcheck.framework import argv as fa
from rlcheck.framework import patch_flags as pf
from rlcheck.framework.schema import DATA_DIR, load
from rlcheck.verdict import Status

MILES = load("miles-main")
TRAIN = ["python3", "train.py", "--rollout-batch-size", "8"]
MULTI_TURN = ["--custom-generate-function-path", "miles.rollout.generate_hub.multi_turn.generate"]
AGENTIC = ["--custom-generate-function-path", "miles.rollout.generate_hub.agentic_tool_call.generate"]


def problems(argv):
    return [(f.flag, f.problem) for f in fa.judge(argv, MILES)[0]]


@pytest.mark.parametrize(("argv", "expected"), [
    # the Megatron branch (radixark/Megatron-LM miles-main): YaRN and the router freezes
    (["--original-max-position-embeddings", "4096", "--beta-fast", "32", "--beta-slow", "1", "--mscale", "1.0",
      "--mscale-all-dim", "1.0"], []),
    (["--moe-router-freeze-gate", "--freeze-e-score-correction-bias"], []),
    (["--moe-router-freeze-gates"], [("--moe-router-freeze-gates", "unknown")]),
    (["--beta-fastt", "32"], [("--beta-fastt", "unknown")]),
    (["--original-max-position-embeddings", "4k"], [("--original-max-position-embeddings", "type")]),
    # the FSDP parser: its options only with --train-backend fsdp
    (["--train-backend", "fsdp", "--fsdp-cpu-offload", "--no-gradient-checkpointing", "--dp-replicate-size", "2",
      "--attn-implementation", "sdpa"], []),
    (["--train-backend=fsdp", "--fsdp-cpu-offload"], []),
    (["--fsdp-cpu-offload"], [("--fsdp-cpu-offload", "unknown")]),
    (["--train-backend", "megatron", "--fsdp-cpu-offload"], [("--fsdp-cpu-offload", "unknown")]),
    (["--train-backend", "fsdp", "--fsdp-cpu-offlaod"], [("--fsdp-cpu-offlaod", "unknown")]),
    (["--train-backend", "fsdp", "--dp-replicate-size", "two"], [("--dp-replicate-size", "type")]),
    # a custom generate function's add_arguments: only with its path
    ([*MULTI_TURN, "--generate-max-turns", "4", "--generate-tool-call-parser", "qwen25"], []),
    ([*AGENTIC, "--custom-agent-function-path", "my.agent.run", "--max-seq-len", "8192"], []),
    (["--generate-max-turns", "4"], [("--generate-max-turns", "unknown")]),
    ([*AGENTIC, "--generate-max-turns", "4"], [("--generate-max-turns", "unknown")]),
    ([*MULTI_TURN, "--generate-max-turn", "4"], [("--generate-max-turn", "unknown")]),
    ([*MULTI_TURN, "--generate-max-turns", "many"], [("--generate-max-turns", "type")]),
])
def test_miles_options_accepted_only_where_miles_adds_them(argv, expected):
    assert problems(argv) == expected


def test_miles_option_without_what_adds_it_fails_naming_it():
    verdict = fa.evaluate([*TRAIN, "--fsdp-cpu-offload"], MILES, "declared miles main")
    assert verdict.status is Status.FAIL
    assert "--fsdp-cpu-offload" in verdict.summary + str(verdict.details)
    assert fa.evaluate([*TRAIN, "--train-backend", "fsdp", "--fsdp-cpu-offload"], MILES, "x").status is Status.PASS
    finding = fa.judge(["--generate-max-turns", "4"], MILES)[0][0]
    assert "--custom-generate-function-path miles.rollout.generate_hub.multi_turn.generate" in finding.text


# --- the rules that read the sources (on small texts written here) -------------------------------------------------

def test_dataclass_options_follow_build_fsdp_parser():
    text = textwrap.dedent('''
        @dataclass
        class FSDPArgs:
            lr: float = 2e-5
            lr_decay_iters: int | None = None
            offload: bool = True
            backend: str | None = "gloo"
            config: str | None = None

        class Other:
            ignored: int = 3
    ''')
    got = {o["flags"][0]: (o["kind"], o["default"]) for o in pf.dataclass_options(text, "FSDPArgs", "g")}
    assert got == {"--config": ("str", None), "--lr": ("float", 2e-5), "--lr-decay-iters": ("int", None),
                   "--offload": ("bool_optional", True), "--backend": ("str", "gloo")}


def test_branch_options_add_arguments_and_config_fields_less_the_known_and_excluded():
    arguments = textwrap.dedent('''
        def _add_args(parser):
            exclude = ["hidden_size"]
            parser.add_argument('--beta-fast', type=float, default=32)
            parser.add_argument(
                '--known-one', action='store_true')
            parser.add_argument('--flag-on', action='store_true')
    ''')
    config = textwrap.dedent('''
        class TransformerConfig:
            hidden_size: int = 0
            freeze_gate: bool = False
            fused: bool = True
            spec: ModuleSpec = None
            ratio: Optional[float] = None
    ''')
    got = {o["flags"][0]: o["kind"] for o in pf.branch_options(arguments, config, {"--known-one"})}
    assert got == {"--beta-fast": "float", "--flag-on": "store_true", "--freeze-gate": "store_true",
                   "--no-fused": "store_false", "--ratio": "float"}


def test_source_options_reads_every_add_argument():
    text = 'def _add(p):\n    p.add_argument("--a-b", type=int, default=16)\n    p.add_argument(\n        "--c")\n'
    assert [(o["flags"], o["kind"]) for o in pf.source_options(text, "g")] == [(["--a-b"], "int"), (["--c"], "str")]


# --- agreement with the sources ------------------------------------------------------------------------------------

MIRRORS = {"miles": (Path("/work/.mirror/radixark+miles/repo"), "31f1ca961a94cb860cec3b2dea34ec332bfa8f76"),
           "megatron": (Path("/work/.mirror/radixark+Megatron-LM/repo"), "2e64d788b67fe8155774200c87606e1e449c494b")}
NAMES = ["miles-megatron-branch-main", "miles-fsdp-main", "miles-generate-multi-turn-main",
         "miles-generate-agentic-tool-call-main"]


def _committed(name):
    return json.loads((DATA_DIR / "components" / f"{name}.json").read_text())


def test_miles_schema_names_each_component_with_what_adds_it():
    raw = json.loads((DATA_DIR / "miles-main.json").read_text())
    when = {c["name"]: c.get("when") for c in raw["components"]}
    assert when["miles-megatron-branch-main"] is None
    assert when["miles-fsdp-main"] == ["--train-backend", "fsdp"]
    for mod in pf.MILES_GENERATE_MODULES:
        assert when[f"miles-generate-{mod.replace('_', '-')}-main"] == [
            "--custom-generate-function-path", f"miles.rollout.generate_hub.{mod}.generate"]
    assert all(_committed(n)["options"] for n in NAMES)


def test_miles_components_match_the_pinned_sources():
    """Rebuilt from Miles 31f1ca96 and the Megatron branch its Dockerfile clones, where those trees are here."""
    if not all((repo / "HEAD").is_file() for repo, _ in MIRRORS.values()):
        pytest.skip("the pinned Miles and radixark/Megatron-LM trees are not on this machine")

    def read(tree, path):
        repo, commit = MIRRORS[tree]
        return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True,
                              check=True).stdout

    raw = json.loads((DATA_DIR / "miles-main.json").read_text())
    known = {f for o in _committed("megatron-core-0.19.2")["options"] + raw["options"] for f in o["flags"]}
    built = pf.miles_components(read, known, "", "")
    for name in NAMES:
        assert built[name]["options"] == _committed(name)["options"], name


def test_miles_fsdp_component_matches_the_live_parser():
    """Where Miles is importable (its image), build_fsdp_parser's options against the committed component."""
    arguments = pytest.importorskip("miles.backends.fsdp_utils.arguments", reason="Miles is not importable here")
    from rlcheck.framework.schema import from_argparse

    live = {(o["flags"][0], o["kind"]) for o in from_argparse(arguments.build_fsdp_parser())}
    assert live == {(o["flags"][0], o["kind"]) for o in _committed("miles-fsdp-main")["options"]}


def test_options_a_generate_function_outside_the_schema_may_add_are_named_not_judged():
    """A --custom-generate-function-path module rlcheck holds no options of (a user's own): Miles calls its
    add_arguments, which cannot be read without importing it, so its options WARN by name instead of FAILing."""
    own = [*TRAIN, "--custom-generate-function-path", "my_pkg.rollout.generate", "--my-max-turns", "3"]
    verdict = fa.evaluate(own, MILES, "declared miles main")
    assert verdict.status is Status.WARN
    assert "--my-max-turns" in verdict.summary and "my_pkg.rollout.generate" in verdict.details
    assert fa.evaluate([*TRAIN, "--my-max-turns", "3"], MILES, "x").status is Status.FAIL
    # a module whose options the schema holds: a misspelt one still FAILs; a known option's bad value still FAILs
    assert fa.evaluate([*TRAIN, *MULTI_TURN, "--generate-max-turn", "3"], MILES, "x").status is Status.FAIL
    assert fa.evaluate([*own, "--rollout-batch-size", "x"], MILES, "x").status is Status.FAIL
