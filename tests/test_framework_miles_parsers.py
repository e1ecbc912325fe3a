"""Miles' options outside its own add_argument literals, judged as Miles' parser reads them: the Megatron branch its
image builds (YaRN, the MoE router freezes), the FSDP backend's parser (one option per FSDPArgs field, only with
--train-backend fsdp) and a custom generate function's add_arguments (only with that --custom-generate-function-path).
Each accepted where Miles accepts it; misspelt, or given without what adds it, it still FAILs."""

from __future__ import annotations

import ast
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


# --- the backend: Megatron's parser (the default) or the FSDP parser, never both ------------------------------------

FSDP = ["--train-backend", "fsdp"]


@pytest.mark.parametrize(("argv", "expected"), [
    # Megatron's options are on Megatron's parser only: --train-backend fsdp builds the FSDP parser without them
    ([*FSDP, "--save-retain-interval", "2"], [("--save-retain-interval", "unknown")]),
    ([*FSDP, "--tensor-model-parallel-size", "2"], [("--tensor-model-parallel-size", "unknown")]),
    ([*FSDP, "--beta-fast", "32"], [("--beta-fast", "unknown")]),  # the Megatron branch's too
    (["--save-retain-interval", "2", "--tensor-model-parallel-size", "2"], []),  # the default backend: megatron
    (["--train-backend", "megatron", "--save-retain-interval", "2"], []),
    (["--train-backend=megatron", "--beta-fast", "32"], []),
    # an option both parsers have, each its own way: Megatron's --fp16 (store_true), FSDPArgs' fp16 (--no-fp16 too)
    ([*FSDP, "--lr", "1e-5", "--fp16", "--no-fp16", "--adam-beta2", "0.98", "--wandb-project", "p"], []),
    (["--fp16", "--lr", "1e-5"], []),
    (["--no-fp16"], [("--no-fp16", "unknown")]),
    # Miles' own options and SGLang's are added to either parser
    ([*FSDP, "--rollout-batch-size", "8", "--sglang-mem-fraction-static", "0.5", "--use-kl-loss"], []),
    # the FSDP parser is argparse's default: it takes a unique prefix (set, and reported) and exits on an ambiguous one
    ([*FSDP, "--attn-impl", "sdpa"], [("--attn-impl", "abbreviation")]),
    ([*FSDP, "--lr-warmup", "3"], [("--lr-warmup", "ambiguous")]),
    (["--attn-impl", "sdpa"], [("--attn-impl", "unknown")]),  # Megatron's parser: allow_abbrev=False
    ([*FSDP, "--save-retain", "2"], [("--save-retain", "unknown")]),  # no prefix of an option it lacks
])
def test_miles_backend_decides_which_parser_reads_the_options(argv, expected):
    assert problems(argv) == expected


def test_megatron_option_with_fsdp_backend_fails_naming_flag_and_backend():
    verdict = fa.evaluate([*TRAIN, *FSDP, "--save-retain-interval", "2"], MILES, "declared miles main")
    assert verdict.status is Status.FAIL
    assert "--save-retain-interval" in verdict.summary and "--train-backend fsdp" in verdict.summary
    assert "--train-backend megatron" in verdict.summary  # what would add it
    assert fa.evaluate([*TRAIN, "--save-retain-interval", "2"], MILES, "x").status is Status.PASS
    assert fa.evaluate([*TRAIN, *FSDP, "--fsdp-cpu-offload", "--dp-replicate-size", "2"], MILES, "x").status \
        is Status.PASS
    left_out = fa.judge(["--no-fp16"], MILES)[0][0].text
    assert "leaves --train-backend out (megatron, its default)" in left_out and "--train-backend fsdp" in left_out


@pytest.mark.parametrize("name", ["slime-main", "slime-v0.3.1", "slime-v0.2.4"])
def test_slime_has_no_fsdp_backend(name):
    """SLIME's pre-parse offers --train-backend megatron only: fsdp is a choice its parser refuses."""
    assert fa.judge(["--train-backend", "fsdp"], load(name))[0][0].problem == "choice"
    assert fa.judge(["--train-backend", "megatron"], load(name))[0] == []


# --- an abbreviated --train-backend: Miles' pre-parse takes prefixes, SLIME's does not --------------------------------

@pytest.mark.parametrize(("argv", "backend"), [
    (["--train-back", "fsdp"], "fsdp"),
    (["--train-b=fsdp"], "fsdp"),
    (["--train-backend", "fsdp"], "fsdp"),
    (["--train-backend=fsdp", "--train-back", "megatron"], "megatron"),  # the last one given wins
    (["--train-back", "megatron", "--train-backend", "fsdp"], "fsdp"),
    (["--train-", "fsdp"], None),  # a prefix of --train-env-vars and --train-memory-margin-bytes too: not the backend
    (["--train", "fsdp"], None),
    (["--train-backends", "fsdp"], None),  # longer than the flag: no prefix of it
    (["--rollout-batch-size", "8"], None),
])
def test_miles_reads_its_backend_as_its_abbreviating_pre_parse_does(argv, backend):
    assert fa.condition(argv, "--train-backend", MILES) == backend


@pytest.mark.parametrize("name", ["slime-main", "slime-v0.3.1", "slime-v0.2.4"])
def test_slime_reads_only_the_whole_backend_flag(name):
    schema = load(name)
    assert not schema.backend_abbrev and MILES.backend_abbrev
    assert fa.condition(["--train-back", "fsdp"], "--train-backend", schema) is None
    assert fa.condition(["--train-backend=megatron"], "--train-backend", schema) == "megatron"


@pytest.mark.parametrize(("argv", "expected"), [
    # fsdp by the pre-parse: the FSDP parser judges the options, and takes the prefix itself (reported, as any)
    (["--train-back", "fsdp", "--fsdp-cpu-offload", "--dp-replicate-size", "2"], [("--train-back", "abbreviation")]),
    (["--train-b=fsdp", "--fsdp-cpu-offload"], [("--train-b", "abbreviation")]),
    (["--train-back", "fsdp", "--save-retain-interval", "2"],
     [("--train-back", "abbreviation"), ("--save-retain-interval", "unknown")]),
    # megatron: Megatron's parser (allow_abbrev=False) rejects the prefix; its options are added
    (["--train-back", "megatron", "--save-retain-interval", "2"], [("--train-back", "unknown")]),
    ([*FSDP, "--train-back", "megatron", "--save-retain-interval", "2"], [("--train-back", "unknown")]),
    # an ambiguous prefix: the pre-parse exits on it (and no backend is read: megatron adds no FSDP option)
    (["--train-", "fsdp", "--fsdp-cpu-offload"], [("--train-", "ambiguous"), ("--fsdp-cpu-offload", "unknown")]),
    # Megatron's --profile is a unique prefix of Miles' own --profile-target (nargs '+'): the pre-parse reads it as that
    # and exits with no value to take; Megatron's --chat-template reads as --chat-template-path with its value: fine
    (["--profile", "--lr", "1e-6"], [("--profile", "missing-value")]),
    (["--lr", "1e-6", "--profile"], [("--profile", "missing-value")]),
    (["--profile", "train_actor"], [("train_actor", "stray")]),
    (["--profile", "x"], [("--profile", "choice"), ("x", "stray")]),
    (["--chat-template", "x"], []),
])
def test_miles_abbreviated_backend_decides_the_parser(argv, expected):
    assert problems(argv) == expected


def test_miles_abbreviated_fsdp_backend_is_judged_by_the_fsdp_parser_in_the_verdict():
    verdict = fa.evaluate([*TRAIN, "--train-back", "fsdp", "--fsdp-cpu-offload"], MILES, "declared miles main")
    assert (verdict.status, verdict.summary) == (Status.FAIL, (
        "1 problem(s) in the argv as miles main (schema miles-main, declared miles main) parses it: --train-back: not "
        "an option, but the main parser (with --train-backend fsdp miles builds it with argparse's allow_abbrev) "
        "takes it as an abbreviation of --train-backend and sets that"))


@pytest.mark.parametrize("name", ["slime-main", "slime-v0.3.1", "slime-v0.2.4"])
def test_slime_drops_an_abbreviated_backend_and_stays_on_megatron(name):
    schema = load(name)
    findings = fa.judge(["--train-back", "fsdp", "--tensor-model-parallel-size", "2"], schema)[0]
    assert [(f.flag, f.problem, f.text) for f in findings] == [
        ("--train-back", "unknown", f"--train-back: no slime {schema.version} parser has it: dropped without a word "
                                    "(parse_known_args)")]

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


def test_branch_options_type_lists_and_literals_as_megatrons_factory_and_hold_changed_choices():
    """ArgumentGroupFactory: List[int] is int with nargs '+', a Literal gives its choices; a release flag whose choices
    the branch changes is held (the branch's option wins), one whose choices it keeps is not; a field(...) whose
    metadata may rename it is left out."""
    config = textwrap.dedent('''
        class TransformerConfig:
            variant: Optional[Literal['gdn', 'dsa', 'dsv4']] = None
            same: Literal['a', 'b'] = 'a'
            ratios: Optional[List[int]] = None
            levels: list[float] | None = None
            renamed: Optional[Literal['e4m3']] = field(
                default=None)
            fused: bool = True
    ''')
    got = {o["flags"][0]: (o["kind"], o["nargs"], o["choices"])
           for o in pf.branch_options("", config, {"--variant", "--same"}, {"--variant": ["gdn", "dsa"],
                                                                           "--same": ["a", "b"]})}
    assert got == {"--variant": ("str", None, ["gdn", "dsa", "dsv4"]), "--ratios": ("int", "+", None),
                   "--levels": ("float", "+", None), "--no-fused": ("store_false", None, None)}
    fused = next(o for o in pf.branch_options("", config, set()) if o["flags"][0] == "--no-fused")
    assert fused["flags"] == ["--no-fused", "--disable-fused"] and fused["dest"] == "fused"


def test_miles_branch_choices_win_over_the_release():
    assert fa.judge(["--experimental-attention-variant", "dsv4", "--dsv4-compress-ratios", "0", "4", "128"],
                    MILES)[0] == []
    assert [f.problem for f in fa.judge(["--experimental-attention-variant", "dsv5"], MILES)[0]] == ["choice"]
    assert [f.problem for f in fa.judge(["--dsv4-compress-ratios", "x"], MILES)[0]] == ["type"]


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
    assert when["miles-megatron-branch-main"] == when["megatron-core-0.19.2"] == ["--train-backend", "megatron"]
    assert when["miles-fsdp-main"] == ["--train-backend", "fsdp"]
    assert raw["parsers"]["main"] == {"abbrev": False, "lenient": False, "abbrev_when": ["--train-backend", "fsdp"]}
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
    release = _committed("megatron-core-0.19.2")["options"]
    known = {f for o in release + raw["options"] for f in o["flags"]}
    built = pf.miles_components(read, known, "", "", {f: o["choices"] for o in release for f in o["flags"]})
    for name in NAMES:
        assert built[name]["options"] == _committed(name)["options"], name


def _show(repo, commit, path):
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def _function(text, name):
    return next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name)


def _called(node):
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}


def test_miles_backend_rule_matches_the_pinned_source():
    """Miles 31f1ca96's parse_args: `--train-backend megatron` parses with Megatron's parse_args (Miles' options added),
    anything else with load_fsdp_args, whose build_fsdp_parser is a plain argparse parser (allow_abbrev left at its
    default) of FSDPArgs plus Miles' options, importing nothing of Megatron; --train-backend's choices and default are
    the schema's. So Megatron's components hold only with megatron (the default), the FSDP one only with fsdp."""
    repo, commit = MIRRORS["miles"]
    if not (repo / "HEAD").is_file():
        pytest.skip("the pinned Miles tree is not on this machine")
    arguments = _show(repo, commit, "miles/utils/arguments.py")
    branch = next(n for n in ast.walk(_function(arguments, "parse_args")) if isinstance(n, ast.If)
                  and ast.unparse(n.test) == "backend == 'megatron'")
    assert "megatron_parse_args" in _called(ast.Module(body=branch.body, type_ignores=[]))
    assert "load_fsdp_args" in _called(ast.Module(body=branch.orelse, type_ignores=[]))
    assert "load_fsdp_args" not in _called(ast.Module(body=branch.body, type_ignores=[]))
    megatron = _show(repo, commit, "miles/backends/megatron_utils/arguments.py")
    assert "from megatron.training.arguments import parse_args" in megatron
    fsdp = _show(repo, commit, pf.MILES_FSDP_FILE)
    imported = {a.name for n in ast.walk(ast.parse(fsdp)) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(ast.parse(fsdp)) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported and not [m for m in imported if "megatron" in m], imported
    made = [n for n in ast.walk(_function(fsdp, "build_fsdp_parser")) if isinstance(n, ast.Call)
            and ast.unparse(n.func) == "argparse.ArgumentParser"]
    assert len(made) == 1 and "allow_abbrev" not in {k.arg for k in made[0].keywords}
    assert "parse_args" in _called(_function(fsdp, "load_fsdp_args"))  # strict: an unknown option exits
    train = next(n for n in ast.walk(_function(arguments, "add_train_arguments")) if isinstance(n, ast.Call)
                 and n.args and ast.literal_eval(n.args[0]) == "--train-backend")
    kw = {k.arg: ast.literal_eval(k.value) for k in train.keywords if k.arg in ("choices", "default")}
    option = MILES.by_flag["--train-backend"]
    assert (list(option.choices), option.default) == (kw["choices"], kw["default"])
    assert kw == {"choices": ["megatron", "fsdp"], "default": "megatron"}


@pytest.mark.parametrize(("commit", "name"), [("624b824", "slime-main"), ("a6272da", "slime-v0.3.1")])
def test_slime_backend_choices_match_the_pinned_source(commit, name):
    repo = Path("/work/.mirror/THUDM+slime/repo")
    if not (repo / "HEAD").is_file():
        pytest.skip("the pinned SLIME tree is not on this machine")
    pre = _function(_show(repo, commit, "slime/utils/arguments.py"), "_pre_parse_mode")
    call = next(n for n in ast.walk(pre) if isinstance(n, ast.Call) and n.args
                and isinstance(n.args[0], ast.Constant) and n.args[0].value == "--train-backend")
    choices = next(ast.literal_eval(k.value) for k in call.keywords if k.arg == "choices")
    assert choices == list(load(name).by_flag["--train-backend"].choices) == ["megatron"]


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
