"""The framework argument schemas and the argv judge: every finding class, both parser leniencies, extraction."""

from __future__ import annotations

import json
import textwrap
from importlib import metadata

import pytest

from rlcheck.framework import argv as fa
from rlcheck.framework.detect import Installed, choose
from rlcheck.framework.schema import DATA_DIR, extract_file, from_argparse, load, skip_lists
from rlcheck.verdict import Status

SLIME, MILES = load("slime-v0.2.4"), load("miles-main")


def problems(argv, schema=SLIME):
    return [(f.flag, f.problem) for f in fa.judge(argv, schema)[0]]


@pytest.mark.parametrize("name", ["slime-v0.2.4", "slime-v0.3.1", "slime-main", "miles-main"])
def test_framework_schemas_name_their_upstream_commit_and_type_the_buffer_size(name):
    schema = load(name)
    assert len(schema.source.split("(")[1].split(")")[0]) == 40  # the upstream commit, in full
    assert schema.by_flag["--update-weight-buffer-size"].kind == "int"
    assert schema.by_flag["--tensor-model-parallel-size"].parser == "main"
    assert "--sglang-model-path" not in schema.by_flag  # skipped by the framework's wrapper


def test_framework_slime_router_options_are_router_prefixed_miles_has_sglang_router_policy():
    assert "--sglang-router-policy" not in SLIME.by_flag and "--sglang-router-ip" in SLIME.by_flag
    assert MILES.by_flag["--sglang-router-policy"].kind == "str"
    assert problems(["--router-policy", "cache_aware"]) == []
    assert fa.judge(["--router-policy", "cache_aware"], SLIME)[1] == ["--router-policy"]


def test_framework_type_choice_and_missing_value():
    assert problems(["--update-weight-buffer-size", "2GiB"]) == [("--update-weight-buffer-size", "type")]
    assert problems(["--update-weight-buffer-size", "2147483648"]) == []
    assert problems(["--update-weight-buffer-size=2GiB"]) == [("--update-weight-buffer-size", "type")]
    assert problems(["--lr", "1e-6"]) == [] and problems(["--lr", "x"]) == [("--lr", "type")]
    assert problems(["--qkv-format", "sbhd"]) == [("--qkv-format", "choice")]
    assert problems(["--qkv-format", "bshd"]) == []
    assert problems(["--attention-backend", "flash"]) == []  # an enum type: its choices are members, not strings
    # argparse reads -1e-6 as an option, not a negative number: --lr is left without a value
    assert ("--lr", "missing-value") in problems(["--lr", "-1e-6"])
    assert problems(["--seed", "-1"]) == []


def test_framework_unknown_is_a_silent_drop_under_slime_and_an_error_under_miles():
    [slime] = fa.judge(["--tensor-model-paralel-size", "2"], SLIME)[0]
    assert slime.problem == "unknown" and "dropped without a word" in slime.text
    [miles] = fa.judge(["--tensor-model-paralel-size", "2"], MILES)[0]
    assert "unrecognized arguments" in miles.text


def test_framework_abbreviation_only_in_slimes_sglang_parser():
    assert problems(["--sglang-mem-fraction", "0.5"]) == [("--sglang-mem-fraction", "abbreviation")]
    assert problems(["--sglang-mem-fraction", "0.5"], MILES) == [("--sglang-mem-fraction", "unknown")]
    assert problems(["--tensor-model-parallel", "2"]) == [("--tensor-model-parallel", "unknown")]  # Megatron's: none
    assert problems(["--sglang-m", "1"]) == [("--sglang-m", "ambiguous")]
    twice = problems(["--sglang-mem-fraction", "0.5", "--sglang-mem-fraction-static", "0.8"])
    assert twice == [("--sglang-mem-fraction", "abbreviation"), ("--sglang-mem-fraction-static", "twice")]


def test_framework_twice_only_with_different_values_and_not_for_append():
    assert problems(["--lr", "1e-6", "--lr", "2e-6"]) == [("--lr", "twice")]
    assert problems(["--lr", "1e-6", "--lr", "1e-6"]) == []
    assert problems(["--colocate", "--colocate"]) == []
    assert problems(["--sglang-ep-size", "2", "--sglang-expert-parallel-size", "4"]) == [
        ("--sglang-expert-parallel-size", "twice")]  # aliases share one dest


# SLIME scripts/run-deepseek-r1.sh: the model script sets alltoall, the run script overrides it with flex.
DISPATCHER = ["--moe-token-dispatcher-type", "alltoall", "--lr", "1e-6", "--moe-token-dispatcher-type", "flex"]


@pytest.mark.parametrize(("argv", "status", "fragments"), [
    (DISPATCHER, Status.WARN, ("--moe-token-dispatcher-type alltoall then --moe-token-dispatcher-type flex",
                               "the last wins: flex", "3 option(s) accepted")),
    (["--moe-token-dispatcher-type", "flex", "--moe-token-dispatcher-type", "flex"], Status.PASS, ()),
    ([*DISPATCHER, "--update-weight-buffer-size", "2GiB"], Status.FAIL, ("1 problem(s)", "2GiB")),
    ([*DISPATCHER, "--tensor-model-paralel-size", "2"], Status.FAIL, ("dropped without a word",)),
    ([*DISPATCHER, "--sglang-mem-fraction", "0.5"], Status.FAIL, ("abbreviation of --sglang-mem-fraction-static",)),
])
def test_framework_option_given_twice_warns_naming_both_values_errors_still_fail(argv, status, fragments):
    verdict = fa.evaluate(argv, SLIME, "test")
    assert verdict.status is status, verdict.summary
    for fragment in fragments:
        assert fragment in verdict.summary
    if status is Status.FAIL:  # the override is still in the details beside the error
        assert "the last wins: flex" in verdict.details


def test_framework_values_of_nargs_star_unknown_and_stray():
    assert problems(["--spec", "miles_plugins.models.glm5.glm5", "get_glm5_spec", "--lr", "1e-6"]) == []
    assert problems(["--no-such-flag", "a", "b", "--lr", "1e-6"]) == [("--no-such-flag", "unknown")]
    assert problems(["--colocate", "yes"]) == [("yes", "stray")]
    # a whole command line is also held to the required options, as SLIME's parser exits without them
    assert problems(["python3", "train.py", "--lr", "1e-6"]) == [("--rollout-batch-size", "missing")]
    assert problems(["python3", "train.py", "--lr", "1e-6", "--rollout-batch-size", "8"]) == []


@pytest.mark.parametrize(("argv", "options"), [
    (["python3", "train.py", "--lr", "1e-6"], ["--lr", "1e-6"]),
    (["python3", "-u", "train.py", "--lr", "1e-6"], ["--lr", "1e-6"]),  # -u is Python's: unbuffered output
    (["python", "-u", "-B", "-X", "dev", "-W", "ignore", "train_async.py", "--lr", "1e-6"], ["--lr", "1e-6"]),
    (["python3", "-m", "slime.train", "--lr", "1e-6"], ["--lr", "1e-6"]),  # a module: what follows it is its own
    (["python3", "train.py", "-u"], ["-u"]),  # after the script: the trainer's
    (["--lr", "1e-6"], ["--lr", "1e-6"]),  # a list of options, no command
])
def test_framework_trainer_options_leave_out_the_interpreters_own(argv, options):
    assert fa.options_of(argv) == options


def test_framework_unbuffered_python_is_not_judged_as_a_trainer_option():
    assert problems(["python3", "-u", "train.py", "--lr", "1e-6", "--rollout-batch-size", "8"]) == []
    assert problems(["python3", "train.py", "-u", "--rollout-batch-size", "8"]) == [("-u", "unknown")]


def test_framework_bool_optional_takes_its_no_form():
    assert problems(["--offload-train"]) == [] and problems(["--no-offload-train"]) == []


def test_framework_verdicts_name_the_schema_and_the_failure():
    ok = fa.evaluate(["--lr", "1e-6"], SLIME, "test")
    assert ok.status is Status.PASS and "slime-v0.2.4" in ok.summary
    dead = fa.evaluate(["--sglang-router-policy", "cache_aware"], SLIME, "test")
    assert (dead.status, dead.failure_id) == (Status.FAIL, "sglang-dead-flag") and dead.remedy
    bad = fa.evaluate(["--update-weight-buffer-size", "2GiB"], MILES, "test")
    assert (bad.status, bad.failure_id) == (Status.FAIL, "framework-arg-rejected") and "2GiB" in bad.summary


def test_framework_choose_installed_else_the_recipes_framework():
    assert choose(Installed(framework=None), "slime")[0].name == "slime-v0.2.4"
    assert choose(Installed(framework=None), "miles")[0].name == "miles-main"
    assert choose(Installed(framework="slime", version="0.3.1"), "miles")[0].name == "slime-v0.3.1"
    schema, how = choose(Installed(framework="slime", version="0.4.0"), "slime")
    assert schema.name == "slime-main" and "no schema of its own" in how
    with pytest.raises(FileNotFoundError, match="there are .*slime-v0.2.4"):
        load("slime-v9")


def test_framework_extract_reads_add_argument_calls(tmp_path):
    src = tmp_path / "pkg" / "sglang_utils" / "arguments.py"
    src.parent.mkdir(parents=True)
    src.write_text(textwrap.dedent('''
        import argparse
        skipped_args = ["model_path", "port"]
        def add_cluster_arguments(parser):
            parser.add_argument("--actor-num-nodes", type=int, default=1, help="h")
            parser.add_argument("--mode", choices=["a", "b"], default="a")
            parser.add_argument("--offload-train", action=argparse.BooleanOptionalAction)
            parser.add_argument("--colocate", action="store_true")
            parser.add_argument(name, **kwargs)
            reset_arg(parser, "--distributed-backend", type=str, default="nccl")
        def parse():
            temp_parser.add_argument("--engine-width", type=int)
    '''))
    options, skipped = extract_file(src, "sglang")
    by = {o["flags"][0]: o for o in options}
    assert (by["--actor-num-nodes"]["kind"], by["--actor-num-nodes"]["default"]) == ("int", 1)
    assert by["--actor-num-nodes"]["group"] == "add_cluster_arguments" and "help" not in by["--actor-num-nodes"]
    assert by["--mode"]["choices"] == ["a", "b"] and by["--offload-train"]["kind"] == "bool_optional"
    assert by["--colocate"]["kind"] == "store_true" and by["--distributed-backend"]["reset_arg"]
    assert "--engine-width" not in by and skipped == ["arguments.py:9"]
    assert skip_lists(tmp_path) == {"skipped_args": ["model_path", "port"]}


def test_framework_megatron_component_matches_the_installed_parser():
    """Live against schema: the committed Megatron part is the installed megatron-core's own parser."""
    arguments = pytest.importorskip("megatron.training.arguments", reason="megatron-core is not installed")
    import argparse

    name = f"megatron-core-{metadata.version('megatron-core')}"
    path = DATA_DIR / "components" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"no committed schema for the installed {name}")
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    arguments.add_megatron_arguments(parser)
    live = {(tuple(o["flags"]), o["kind"], o["nargs"]) for o in from_argparse(parser)}
    committed = {(tuple(o["flags"]), o["kind"], o["nargs"]) for o in json.loads(path.read_text())["options"]}
    assert live == committed


def test_framework_live_slime_tree_matches_its_schema():
    """Where SLIME is importable (the training image), its own argument files against the committed schema."""
    slime = pytest.importorskip("slime", reason="SLIME is not importable here (not installed on this machine)")
    from pathlib import Path

    version = metadata.version("slime")
    name = {"0.2.4": "slime-v0.2.4", "0.3.1": "slime-v0.3.1"}.get(version)
    if name is None:
        pytest.skip(f"no committed schema for the installed SLIME {version}")
    root = Path(slime.__file__).parent
    live = {f for p in ("utils/arguments.py", "backends/sglang_utils/arguments.py")
            for o in extract_file(root / p, "x")[0] for f in o["flags"]}
    assert live <= set(load(name).by_flag)


def test_framework_check_runs_in_dry_runs_and_fails_the_old_glm_argv():
    """`pytest testcases/ --dry-run` judges recipes with gate.recipe_verdicts: this check is among them."""
    from rlcheck.preflight import gate
    from tests.registry_cases_framework import glm_as_shipped_before_the_fix

    bad = glm_as_shipped_before_the_fix()
    verdicts = {v.check_id: v for v in gate.recipe_verdicts(bad.recipe, bad.profile)}
    assert verdicts["recipe_framework_args"].status is Status.FAIL
    assert "--update-weight-buffer-size 2GiB" in verdicts["recipe_framework_args"].summary
