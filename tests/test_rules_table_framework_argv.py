"""The argv judge as a rule table (rlcheck/framework/argv.py): how each parser of SLIME and Miles reads an option, on
small schemas written here (each rule on both sides) and on the committed ones where the real option names matter:
exact names, unique and ambiguous prefixes (argparse counts option strings; its message, candidates named), Miles'
pre-parse of --train-backend over its own options, the values each option takes and checks, the options added only
under a condition, opaque prefixes, custom generate functions, options given twice, required ones, and the verdict."""

from __future__ import annotations

from typing import Any

import pytest

from rlcheck import catalog
from rlcheck.framework import argv as fa
from rlcheck.framework.schema import Option, Parser, Schema, Unreleased, load
from rlcheck.verdict import Status

MILES, SLIME = load("miles-main"), load("slime-v0.2.4")
FSDP_WHEN = ("--train-backend", "fsdp")
MEGATRON_WHEN = ("--train-backend", "megatron")


def opt(*flags: str, parser: str = "main", kind: str = "str", **kw: Any) -> Option:
    return Option(flags=flags, parser=parser, group=kw.pop("group", "g"), kind=kind, **kw)


def schema(*options: Option, framework: str = "slime", parsers: tuple[Parser, ...] | None = None,
           **kw: Any) -> Schema:
    parsers = parsers or (Parser(name="main", abbrev=False, lenient=True), Parser(name="sglang", abbrev=True,
                                                                                  lenient=True))
    return Schema(name="t-1", framework=framework, version="1", source="s", parsers=parsers, options=options, **kw)


# SLIME-like: a lenient Megatron parser and an abbreviating SGLang parser
TOY = schema(opt("--lr", kind="float"), opt("--seed", kind="int"), opt("--tp", kind="int", choices=(1, 2, 4)),
             opt("--mode", choices=("a", "b")), opt("--flag", kind="store_true"), opt("--two", kind="int", nargs=2),
             opt("--many", nargs="+"), opt("--any", nargs="*"), opt("--maybe", nargs="?"),
             opt("--impl", kind="AttnBackend", choices=("flash", "fused")), opt("--tag", kind="append"),
             opt("--save"), opt("--save-interval", kind="int"),
             opt("--sglang-mem-fraction-static", parser="sglang", kind="float"),
             opt("--sglang-max-running-requests", parser="sglang", kind="int"),
             opt("--sglang-tp-size", "--sglang-tensor-parallel-size", parser="sglang", kind="int",
                 dest="sglang_tp_size"),
             opt("--sglang-draft-model-path", "--sglang-draft-model", parser="sglang"),
             opt("--need", kind="int", required=True),
             opaque_prefixes=("--router-",))


def _miles(*extra: Option, **kw: Any) -> Schema:
    """Miles-like: one strict parser; Megatron's options only with --train-backend megatron (the default), the FSDP
    ones only with fsdp, when the parser takes prefixes; the backend picked by an abbreviating pre-parse."""
    return schema(opt("--train-backend", choices=("megatron", "fsdp"), default="megatron"),
                  opt("--train-env-vars"), opt("--profile-target", nargs="+", choices=("a", "b")),
                  opt("--chat-template-path"), opt("--fp16", kind="store_true", when=MEGATRON_WHEN),
                  opt("--profile", kind="store_true", when=MEGATRON_WHEN),
                  opt("--chat-template", when=MEGATRON_WHEN), opt("--ddp-size", kind="int", when=FSDP_WHEN),
                  opt("--seed-base", kind="int"), opt("--seed", kind="int", when=MEGATRON_WHEN),
                  opt("--fp16", "--no-fp16", kind="bool_optional", when=FSDP_WHEN), *extra,
                  framework="miles", backend_abbrev=True,
                  parsers=(Parser(name="main", abbrev=False, lenient=False, abbrev_when=FSDP_WHEN),), **kw)


MILESY = _miles()
PRE = ("the miles pre-parse of --train-backend (over its own options, with argparse's allow_abbrev)")
FSDP_PARSER = "the main parser (with --train-backend fsdp miles builds it with argparse's allow_abbrev)"


def found(argv: list[str], on: Schema = TOY) -> list[tuple[str, str, str]]:
    return [(f.flag, f.problem, f.text) for f in fa.judge(argv, on)[0]]


# --- tokens: flags, negative numbers, the interpreter's own options ------------------------------------------------

@pytest.mark.parametrize(("token", "is_flag"), [
    ("--lr", True), ("-u", True), ("-", False), ("x", False), ("-1", False), ("-12", False), ("-1.5", False),
    ("-.5", False), ("-1.", True), ("-1e-6", True), ("-1x", True), ("--1", True),
    # a space before any `=`: argparse takes the token for a positional argument
    ("--load-format dummy", False), ("-x y", False), ("--a b=c", False), ("--a=b c", True), ("--a=", True),
])
def test_is_flag_as_argparse_tells_an_option_from_a_negative_number(token, is_flag):
    assert fa._is_flag(token) is is_flag


@pytest.mark.parametrize(("argv", "options"), [
    (["python3", "-X", "dev", "-W", "ignore", "train.py", "--lr", "1"], ["--lr", "1"]),
    (["python3", "-c", "code", "--lr", "1"], ["--lr", "1"]),
    (["python3", "-m"], []),
    (["python", "-X"], []),  # a value option with nothing after it
    (["python3", "--version"], ["--version"]),  # a long option is not the interpreter's
    (["python3", "-", "train.py"], ["-", "train.py"]),  # '-' alone (stdin) ends the interpreter's options
    (["python3.11", "a.py", "b.py", "--lr"], ["--lr"]),
    (["train.py", "--lr"], ["--lr"]),
    (["pythonic", "--lr"], ["--lr"]),  # a first token named python*, even without options
    (["python3", "python3", "train", "--lr"], ["train", "--lr"]),  # every leading python* token, then no script
    (["torchrun", "train.py"], ["torchrun", "train.py"]),  # not python: left as is
    (["-1", "python3"], ["-1", "python3"]),
    ([], []),
])
def test_options_of_leaves_out_the_interpreter_and_its_script(argv, options):
    assert fa.options_of(argv) == options


# --- option(): the value argparse keeps ------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "value"), [
    (["--lr", "1", "--lr", "2"], "2"), (["--lr=3"], "3"), (["--lr="], ""), (["--lr"], None), ([], None),
    (["--lr", "1", "--lr"], "1"),  # a last --lr without a value keeps the one before
    (["--lrx", "1"], None), (["x", "--lr", "--seed"], "--seed"),
])
def test_option_keeps_the_last_value_given(argv, value):
    assert fa.option(argv, "--lr") == value


def test_option_reads_the_other_names_the_parser_takes_as_the_flag():
    assert fa.option(["--l", "5"], "--lr", also=lambda name: name == "--l") == "5"
    assert fa.option(["--l", "5"], "--lr", also=lambda name: False) is None


# --- conditions: a value given, else the default ---------------------------------------------------------------------

@pytest.mark.parametrize(("tokens", "when", "holds"), [
    ([], None, True), ([], MEGATRON_WHEN, True), ([], FSDP_WHEN, False),  # the default: megatron
    (["--train-backend", "fsdp"], FSDP_WHEN, True), (["--train-backend", "fsdp"], MEGATRON_WHEN, False),
    (["--train-back", "fsdp"], FSDP_WHEN, True),  # the pre-parse takes the unique prefix
    (["--train-", "fsdp"], FSDP_WHEN, False),  # an ambiguous one sets nothing
    ([], ("--nowhere", "x"), False), (["--nowhere", "x"], ("--nowhere", "x"), True),  # no such option: no default
])
def test_holds_reads_the_value_given_else_the_default(tokens, when, holds):
    assert fa.holds(when, tokens, MILESY) is holds


@pytest.mark.parametrize(("tokens", "value"), [
    (["--train-backend", "fsdp"], "fsdp"), (["--train-back", "fsdp"], "fsdp"), (["--train-b=fsdp"], "fsdp"),
    (["--train-", "fsdp"], None),  # ambiguous: --train-env-vars too
    (["--train-backends", "fsdp"], None),  # longer than the flag: no prefix of it
    (["-train-back", "fsdp"], None),  # one dash: argparse abbreviates long options only
    (["--help", "fsdp"], None),
])
def test_condition_reads_the_backend_as_the_abbreviating_pre_parse_does(tokens, value):
    assert fa.condition(tokens, "--train-backend", MILESY) == value


def test_condition_reads_whole_flags_only_without_an_abbreviating_pre_parse():
    assert fa.condition(["--train-back", "fsdp"], "--train-backend", schema(*MILESY.options)) is None
    # another flag, or a backend flag the schema lacks: whole names only
    assert fa.condition(["--train-env", "x"], "--train-env-vars", MILESY) is None
    assert fa.condition(["--train-back", "fsdp"], "--train-backend", _miles_without_backend()) is None


def _miles_without_backend() -> Schema:
    return schema(opt("--train-bx"), framework="miles", backend_abbrev=True)


@pytest.mark.parametrize(("name", "abbreviates"), [
    ("--train-b", True), ("--train-backend", False),  # the flag itself is an option string, no prefix
    ("--train-", False), ("--t", False), ("--ddp", False),  # ambiguous; or a prefix of an FSDP option only
])
def test_abbreviates_only_a_unique_prefix_among_the_pre_parses_strings(name, abbreviates):
    assert fa._abbreviates(name, "--train-backend", MILESY) is abbreviates


# --- which parsers take prefixes, and their option strings -----------------------------------------------------------

def test_readers_of_a_miles_argv_pre_parse_first_then_the_fsdp_parser_when_it_is_built():
    [pre] = fa.readers(MILESY, [])
    assert (pre.who, pre.sets) == (PRE, False)
    assert list(pre.strings) == ["--help", "--train-backend", "--train-env-vars", "--profile-target",
                                 "--chat-template-path", "--seed-base"]
    assert pre.strings["--help"] is None and pre.strings["--train-env-vars"] is MILESY.options[1]
    pre, fsdp = fa.readers(MILESY, ["--train-backend", "fsdp"])
    assert (fsdp.who, fsdp.sets) == (FSDP_PARSER, True)
    assert list(fsdp.strings) == ["--train-backend", "--train-env-vars", "--profile-target", "--chat-template-path",
                                  "--ddp-size", "--seed-base", "--fp16", "--no-fp16"]
    assert fsdp.strings["--fp16"] is MILESY.options[-1]  # the FSDP parser's own --fp16, not Megatron's


def test_readers_of_a_slime_argv_the_sglang_parser_only():
    [sglang] = fa.readers(TOY, [])
    assert (sglang.who, sglang.sets) == ("the sglang parser", True)
    assert list(sglang.strings)[:3] == ["--sglang-mem-fraction-static", "--sglang-max-running-requests",
                                        "--sglang-tp-size"]
    assert fa.readers(schema(opt("--lr"), parsers=(Parser(name="main", abbrev=False, lenient=True),)), []) == []


def test_preparse_without_an_abbreviating_backend_flag_is_none():
    assert fa._preparse(TOY) == {}


# --- prefixes: unique, ambiguous, exact ----------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    # a unique prefix: the SGLang parser sets that option (reported: the user meant something else, perhaps)
    (["--sglang-mem", "0.5"], [("--sglang-mem", "abbreviation", "--sglang-mem: not an option, but the sglang parser "
                                                                "takes it as an abbreviation of "
                                                                "--sglang-mem-fraction-static and sets that")]),
    (["--sglang-tensor", "2"], [("--sglang-tensor", "abbreviation", "--sglang-tensor: not an option, but the sglang "
                                                                    "parser takes it as an abbreviation of "
                                                                    "--sglang-tensor-parallel-size and sets that")]),
    # its value is checked as that option's
    (["--sglang-mem", "x"], [("--sglang-mem", "abbreviation", "--sglang-mem: not an option, but the sglang parser "
                                                              "takes it as an abbreviation of "
                                                              "--sglang-mem-fraction-static and sets that"),
                             ("--sglang-mem", "type", "--sglang-mem x: invalid float value (the parser exits; g "
                                                      "declares type=float)")]),
    # two options share the prefix: argparse's own words, every candidate named
    (["--sglang-m", "1"], [("--sglang-m", "ambiguous", "--sglang-m: the sglang parser exits: 'ambiguous option: "
                                                       "--sglang-m could match --sglang-mem-fraction-static, "
                                                       "--sglang-max-running-requests'")]),
    (["--sglang-m=1"], [("--sglang-m", "ambiguous", "--sglang-m: the sglang parser exits: 'ambiguous option: "
                                                    "--sglang-m=1 could match --sglang-mem-fraction-static, "
                                                    "--sglang-max-running-requests'")]),
    # two names of one option are two option strings: ambiguous too (argparse 3.10 to 3.13)
    (["--sglang-draft-mod", "p"], [("--sglang-draft-mod", "ambiguous",
                                    "--sglang-draft-mod: the sglang parser exits: 'ambiguous option: "
                                    "--sglang-draft-mod could match --sglang-draft-model-path, "
                                    "--sglang-draft-model'")]),
    # an exact name that is also a prefix of another: the exact one
    (["--sglang-draft-model", "p"], []), (["--save", "p", "--save-interval", "2"], []),
    # the lenient Megatron parser takes no prefix: dropped
    (["--save-int", "2"], [("--save-int", "unknown", "--save-int: no slime 1 parser has it: dropped without a word "
                                                     "(parse_known_args)")]),
    # one dash: no long-option prefix (argparse's short options are another rule, which these parsers never meet)
    (["-sglang-mem", "1"], [("-sglang-mem", "unknown", "-sglang-mem: no slime 1 parser has it: dropped without a word "
                                                      "(parse_known_args)")]),
])
def test_prefixes_as_each_parser_reads_them(argv, expected):
    assert found(argv) == expected


def test_ambiguous_names_ten_candidates_then_counts_the_rest():
    many = schema(*(opt(f"--sglang-x{n:02d}", parser="sglang") for n in range(12)))
    eleven = schema(*(opt(f"--sglang-x{n:02d}", parser="sglang") for n in range(11)))
    ten = schema(*(opt(f"--sglang-x{n:02d}", parser="sglang") for n in range(10)))
    listed = ", ".join(f"--sglang-x{n:02d}" for n in range(10))
    assert found(["--sglang-x"], many)[0][2] == (f"--sglang-x: the sglang parser exits: 'ambiguous option: "
                                                 f"--sglang-x could match {listed}, ... (2 more)'")
    assert found(["--sglang-x"], eleven)[0][2].endswith(f"{listed}, ... (1 more)'")
    assert found(["--sglang-x"], ten)[0][2].endswith(f"{listed}'")


@pytest.mark.parametrize(("argv", "expected"), [
    # the case: the pre-parse of the backend exits before any other parser, whatever the backend
    (["--train-", "fsdp"], [("--train-", "ambiguous", f"--train-: {PRE} exits: 'ambiguous option: --train- could "
                                                      "match --train-backend, --train-env-vars'")]),
    (["--train-=fsdp"], [("--train-", "ambiguous", f"--train-: {PRE} exits: 'ambiguous option: --train-=fsdp could "
                                                   "match --train-backend, --train-env-vars'")]),
    # argparse's --help is one of the pre-parse's option strings
    (["--h"], [("--h", "ambiguous", f"--h: {PRE} exits: 'ambiguous option: --h could match --help, --hx'")]),
    # a unique prefix of the backend: set; the FSDP parser takes it again (reported)
    (["--train-b", "fsdp", "--ddp-size", "2"],
     [("--train-b", "abbreviation", f"--train-b: not an option, but {FSDP_PARSER} takes it as an abbreviation of "
                                    "--train-backend and sets that")]),
    # ambiguous in the FSDP parser only (not in the pre-parse, where --ddp-size is not)
    (["--train-backend", "fsdp", "--d", "2"], [("--d", "ambiguous", f"--d: {FSDP_PARSER} exits: 'ambiguous option: "
                                                                    "--d could match --ddp-size, --ddp-mode'")]),
    # the same prefix under megatron: Megatron's parser takes no prefix; it is no option
    (["--d", "2"], [("--d", "unknown", "--d: no miles 1 parser has it: rejected: unrecognized arguments")]),
])
def test_miles_prefixes_pre_parse_first(argv, expected):
    assert found(argv, _miles(opt("--hx"), opt("--ddp-mode", when=FSDP_WHEN))) == expected


@pytest.mark.parametrize(("argv", "expected"), [
    # Megatron's --profile is a unique prefix of --profile-target (nargs '+'): the pre-parse exits without a value
    (["--profile"], [("--profile", "missing-value", f"--profile: {PRE} reads it as --profile-target: "
                                                    "--profile-target: expected a value, got none: the parser exits")]),
    (["--profile", "--fp16"], [("--profile", "missing-value", f"--profile: {PRE} reads it as --profile-target: "
                                                              "--profile-target: expected a value, got none: the "
                                                              "parser exits")]),
    (["--profile", "c"], [("--profile", "choice", f"--profile: {PRE} reads it as --profile-target: --profile-target c: "
                                                  "not one of a, b"), ("c", "stray", "'c': a value no option takes")]),
    (["--profile=c"], [("--profile", "choice", f"--profile: {PRE} reads it as --profile-target: --profile-target c: "
                                               "not one of a, b")]),
    # it takes as many values as its own option does: one for --seed-base, which is an int
    (["--seed", "1", "x"], [("x", "stray", "'x': a value no option takes")]),
    (["--seed", "x"], [("--seed", "type", f"--seed: {PRE} reads it as --seed-base: --seed-base x: invalid int value "
                                          "(the parser exits; g declares type=int)"),
                       ("--seed", "type", "--seed x: invalid int value (the parser exits; g declares type=int)")]),
    # a value it accepts: nothing from the pre-parse; the trainer's parser takes --profile as the switch it is
    (["--profile", "a"], [("a", "stray", "'a': a value no option takes")]),
    (["--chat-template", "x"], []),
    # the same name read as the same option by the trainer's parser: judged once, there
    (["--train-backend", "fsdp", "--profile-t"], [
        ("--profile-t", "abbreviation", f"--profile-t: not an option, but {FSDP_PARSER} takes it as an abbreviation "
                                        "of --profile-target and sets that"),
        ("--profile-t", "missing-value", "--profile-t: expected a value, got none: the parser exits")]),
    # the pre-parse's --help has no option to read: a name that prefixes it alone is no pre-parse finding
    (["--he"], [("--he", "unknown", "--he: no miles 1 parser has it: rejected: unrecognized arguments")]),
])
def test_miles_pre_parse_reads_a_unique_prefix_as_its_own_option_and_checks_its_values(argv, expected):
    assert found(argv, MILESY) == expected


def test_slime_has_no_pre_parse_of_prefixes():
    slimey = schema(*MILESY.options, parsers=MILESY.parsers)
    assert found(["--profile"], slimey) == []


# --- values: how many each option takes, their type and choices -------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["--lr", "1e-6"], []), (["--lr", "x"], [("--lr", "type", "--lr x: invalid float value (the parser exits; g "
                                                               "declares type=float)")]),
    (["--seed", "-3"], []), (["--seed", "3.5"], [("--seed", "type", "--seed 3.5: invalid int value (the parser "
                                                                    "exits; g declares type=int)")]),
    (["--seed"], [("--seed", "missing-value", "--seed: expected a value, got none: the parser exits")]),
    (["--seed", "--lr", "1"], [("--seed", "missing-value", "--seed: expected a value, got none: the parser exits")]),
    (["--seed="], [("--seed", "type", "--seed : invalid int value (the parser exits; g declares type=int)")]),
    (["--tp", "4"], []), (["--tp", "3"], [("--tp", "choice", "--tp 3: not one of 1, 2, 4")]),
    (["--mode", "b"], []), (["--mode", "c"], [("--mode", "choice", "--mode c: not one of a, b")]),
    (["--impl", "anything"], []),  # an enum type: its choices are its members, not comparable here
    (["--flag"], []), (["--flag", "x"], [("x", "stray", "'x': a value no option takes")]),
    (["--two", "1", "2"], []),
    (["--two", "1"], [("--two", "missing-value", "--two: expected a value, got none: the parser exits")]),
    (["--two", "1", "2", "3"], [("3", "stray", "'3': a value no option takes")]),
    (["--two", "x", "y"], [("--two", "type", "--two x: invalid int value (the parser exits; g declares type=int)"),
                           ("--two", "type", "--two y: invalid int value (the parser exits; g declares type=int)")]),
    (["--lr", "1", "2"], [("2", "stray", "'2': a value no option takes")]),  # one value, no more
    (["--many"], [("--many", "missing-value", "--many: expected a value, got none: the parser exits")]),
    (["--many", "a", "b", "c"], []), (["--any"], []), (["--any", "a", "b"], []),
    (["--maybe"], []), (["--maybe", "a"], []),
    (["--maybe", "a", "b"], [("b", "stray", "'b': a value no option takes")]),
    (["--unknown", "a", "b", "--lr", "1"], [("--unknown", "unknown", "--unknown: no slime 1 parser has it: dropped "
                                                                     "without a word (parse_known_args)")]),
    (["--router-policy", "x", "y"], []),  # an opaque prefix keeps its loose values, and is not judged
    (["stray", "--lr", "1"], [("stray", "stray", "'stray': a value no option takes")]),
    (["--flag", "--lr 1"], [("--lr 1", "stray", "'--lr 1': a value no option takes (one token holding a space: "
                                               "argparse reads it as a value, not an option; quoted as one word "
                                               "where two were meant?)")]),
    (["--flag", "x y"], [("x y", "stray", "'x y': a value no option takes")]),  # not option-shaped: no hint
    # after a stray value the options are still read and judged
    (["stray", "--seed", "3.5"], [("stray", "stray", "'stray': a value no option takes"),
                                  ("--seed", "type", "--seed 3.5: invalid int value (the parser exits; g declares "
                                                     "type=int)")]),
    (["--lr=1", "2"], [("2", "stray", "'2': a value no option takes")]),  # --flag=value takes nothing after it
])
def test_values_as_argparse_gives_them(argv, expected):
    assert found(argv) == expected


def test_choices_compared_as_typed_or_as_written():
    floats = schema(opt("--f", kind="float", choices=(0.5, 1.0)), opt("--s", choices=("1", "2")))
    assert found(["--f", "1"], floats) == []  # 1 -> 1.0, one of the choices
    assert found(["--f", "0.50"], floats) == []
    assert found(["--f", "2"], floats) == [("--f", "choice", "--f 2: not one of 0.5, 1.0")]
    assert found(["--s", "2"], floats) == []


# --- options added only under a condition ---------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["--ddp-size", "2"], [("--ddp-size", "unknown", "--ddp-size: miles adds it only with --train-backend fsdp (g); "
                                                     "this argv leaves --train-backend out (megatron, its default): "
                                                     "the parser exits (unrecognized arguments)")]),
    (["--train-backend", "megatron", "--ddp-size", "2"],
     [("--ddp-size", "unknown", "--ddp-size: miles adds it only with --train-backend fsdp (g); this argv gives "
                                "--train-backend megatron: the parser exits (unrecognized arguments)")]),
    (["--train-backend", "fsdp", "--ddp-size", "2"], []),
    (["--train-backend", "fsdp", "--fp16"], []), (["--fp16"], []),
    (["--train-backend", "fsdp", "--profile"], [
        ("--profile", "missing-value", f"--profile: {PRE} reads it as --profile-target: --profile-target: expected a "
                                       "value, got none: the parser exits"),
        ("--profile", "unknown", "--profile: miles adds it only with --train-backend megatron (g); this argv gives "
                                 "--train-backend fsdp: the parser exits (unrecognized arguments)")]),
])
def test_options_added_under_a_condition(argv, expected):
    assert found(argv, MILESY) == expected


@pytest.mark.parametrize("gen", [opt("--gen"), opt("--other")])  # the condition's option in the schema, or not
def test_not_added_without_a_default_says_without_it(gen):
    gated = schema(opt("--gen-opt", when=("--gen", "m")), gen)
    assert found(["--gen-opt", "x"], gated) == [
        ("--gen-opt", "unknown", "--gen-opt: slime adds it only with --gen m (g); without it: the parser exits "
                                 "(unrecognized arguments)")]
    # two conditions, named once each; the flag named is the first condition's
    both = schema(opt("--o", when=("--gen", "m")), opt("--o", when=("--gen", "n")), opt("--o", when=("--gen", "m")),
                  opt("--gen"))
    assert found(["--gen", "k", "--o", "x"], both)[0][2] == (
        "--o: slime adds it only with --gen m (g) or --gen n (g); this argv gives --gen k: the parser exits "
        "(unrecognized arguments)")


# --- custom generate functions (Miles) ---------------------------------------------------------------------------

CUSTOM = "--custom-generate-function-path"


@pytest.mark.parametrize(("argv", "expected"), [
    ([CUSTOM, "my.gen", "--turns", "3"], [
        ("--turns", "custom", "--turns: not an option of miles 1; --custom-generate-function-path my.gen may add it "
                              "(its generate function's add_arguments, which rlcheck cannot read without importing "
                              "it): not judged")]),
    ([CUSTOM, "known.gen", "--turns", "3"], [
        ("--turns", "unknown", "--turns: no miles 1 parser has it: rejected: unrecognized arguments")]),
    (["--turns", "3"], [("--turns", "unknown", "--turns: no miles 1 parser has it: rejected: unrecognized arguments")]),
    ([CUSTOM, "known.gen", "--max-turns", "3"], []),
])
def test_custom_generate_function_options(argv, expected):
    gen = _miles(opt(CUSTOM), opt("--max-turns", kind="int", when=(CUSTOM, "known.gen")))
    assert found(argv, gen) == expected


def test_custom_generate_path_counts_under_miles_only():
    slimey = schema(opt(CUSTOM))
    assert found([CUSTOM, "my.gen", "--turns", "3"], slimey) == [
        ("--turns", "unknown", "--turns: no slime 1 parser has it: dropped without a word (parse_known_args)")]


# --- twice, required, counts -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["--lr", "1", "--lr", "2"], [("--lr", "twice", "--lr 1 then --lr 2: one option given twice; the last wins: 2")]),
    (["--lr", "1", "--lr", "1"], []),
    (["--tag", "a", "--tag", "b"], []),  # append: each value kept
    (["--sglang-tp-size", "1", "--sglang-tensor-parallel-size", "2"],
     [("--sglang-tensor-parallel-size", "twice", "--sglang-tp-size 1 then --sglang-tensor-parallel-size 2: one "
                                                 "option given twice; the last wins: 2")]),
    (["--lr", "1", "--lr=2"], [("--lr", "twice", "--lr 1 then --lr 2: one option given twice; the last wins: 2")]),
    (["--two", "1", "2", "--two", "3", "4"], [("--two", "twice", "--two 1 2 then --two 3 4: one option given twice; "
                                                                 "the last wins: 3 4")]),
])
def test_twice_with_different_values(argv, expected):
    assert found(argv) == expected


def test_twice_by_first_flag_without_a_dest():
    nodest = schema(opt("--a", "--b"))
    assert found(["--a", "1", "--b", "2"], nodest) == [
        ("--b", "twice", "--a 1 then --b 2: one option given twice; the last wins: 2")]


@pytest.mark.parametrize(("argv", "missing"), [
    (["python3", "train.py", "--lr", "1"], True), (["python3", "train.py", "--need", "1"], False),
    (["--lr", "1"], False),  # a list of options, not a whole command line
    (["train.py", "--lr", "1"], True),
])
def test_required_options_of_a_whole_command_line(argv, missing):
    expected = [("--need", "missing", "--need is required: the parser exits with 'the following arguments are "
                                      "required: --need' (a line lost from the launch leaves it out)")]
    assert found(argv) == (expected if missing else [])


def test_required_by_dest_or_first_flag():
    by_flag = schema(opt("--need", kind="int", required=True))
    assert found(["train.py", "--need", "1"], by_flag) == []
    assert found(["train.py"], by_flag)[0][0] == "--need"


def test_judge_counts_options_read_and_lists_opaque_ones():
    findings, opaque, count = fa.judge(["--lr", "1", "--router-x", "2", "loose", "--seed", "x", "--router-y"], TOY)
    assert ([f.problem for f in findings], opaque, count) == (["type"], ["--router-x", "--router-y"], 4)


# --- the verdict -----------------------------------------------------------------------------------------------------

WHICH = "slime 1 (schema t-1, how)"


def test_verdict_pass_names_the_count_and_opaque_options():
    verdict = fa.evaluate(["--lr", "1", "--router-x", "2", "--router-y"], TOY, "how")
    assert (verdict.status, verdict.failure_id, verdict.summary, verdict.details, verdict.remedy) == (
        Status.PASS, "framework-arg-rejected", f"3 option(s) all accepted by {WHICH}",
        "not judged (options of a package outside the schema): --router-x, --router-y", "")
    assert fa.evaluate(["--lr", "1"], TOY, "how").details == ""


def test_verdict_twice_warns_naming_values_and_winner():
    verdict = fa.evaluate(["--lr", "1", "--lr", "2", "--seed", "1", "--seed", "2", "--router-x"], TOY, "how")
    assert (verdict.status, verdict.failure_id, verdict.remedy, verdict.summary, verdict.details) == (
        Status.WARN, "framework-arg-rejected", "",
        f"5 option(s) accepted by {WHICH}; 2 given twice with different values: --lr 1 then --lr 2: one option given "
        "twice; the last wins: 2; --seed 1 then --seed 2: one option given twice; the last wins: 2",
        "--lr 1 then --lr 2: one option given twice; the last wins: 2\n--seed 1 then --seed 2: one option given twice; "
        "the last wins: 2\nnot judged (options of a package outside the schema): --router-x")


def test_verdict_twice_lists_three_in_the_summary():
    argv = [t for f in ("--lr", "--seed", "--save", "--mode") for t in (f, "a" if f == "--mode" else "1", f,
                                                                        "b" if f == "--mode" else "2")]
    summary = fa.evaluate(argv, TOY, "how").summary
    assert "4 given twice" in summary and "--save 1 then" in summary and "--mode a then" not in summary


def test_verdict_unjudged_warns_naming_who_may_add_them():
    gen = _miles(opt(CUSTOM))
    verdict = fa.evaluate([CUSTOM, "m.g", "--xa", "--xb", "--xc", "--xd", "--xe"], gen, "how")
    assert (verdict.status, verdict.summary) == (
        Status.WARN, "6 option(s) read by miles 1 (schema t-1, how); 5 not judged (a custom generate function may add "
                     "them): --xa, --xb, --xc, --xd")
    assert verdict.details.splitlines()[0].startswith("--xa: not an option of miles 1;")
    assert len(verdict.details.splitlines()) == 5


def test_verdict_fail_counts_blocking_problems_with_remedy_and_overrides_in_details():
    verdict = fa.evaluate(["--lr", "x", "--seed", "1", "--seed", "2", "--mode", "c", "--tp", "3", "--nope"], TOY, "how")
    assert (verdict.status, verdict.failure_id, verdict.remedy) == (
        Status.FAIL, "framework-arg-rejected", catalog.get("framework-arg-rejected").remedy)
    assert verdict.summary == (f"4 problem(s) in the argv as {WHICH} parses it: --lr x: invalid float value (the "
                               "parser exits; g declares type=float); --mode c: not one of a, b; --tp 3: not one of "
                               "1, 2, 4")
    assert verdict.details.splitlines() == [
        "--lr x: invalid float value (the parser exits; g declares type=float)", "--mode c: not one of a, b",
        "--tp 3: not one of 1, 2, 4", "--nope: no slime 1 parser has it: dropped without a word (parse_known_args)",
        "--seed 1 then --seed 2: one option given twice; the last wins: 2"]


def test_verdict_unjudged_of_both_kinds_with_overrides_and_opaque_notes():
    branch = Unreleased(prefix="--sglang-", component="sglang-9", branch="its branch", removed={},
                        release=frozenset())
    gen = _miles(opt(CUSTOM), opt("--lr", kind="float"), unreleased=(branch,), opaque_prefixes=("--router-",))
    verdict = fa.evaluate([CUSTOM, "m.g", "--sglang-new", "--xa", "--lr", "1", "--lr", "2", "--router-z"], gen, "how")
    assert (verdict.status, verdict.failure_id, verdict.remedy, verdict.summary) == (
        Status.WARN, "framework-arg-rejected", "", "6 option(s) read by miles 1 (schema t-1, how); 2 not judged (an "
                                                   "unreleased branch of the package or a custom generate function may "
                                                   "add them): --sglang-new, --xa")
    assert verdict.details.splitlines() == [
        "--lr 1 then --lr 2: one option given twice; the last wins: 2",
        "--sglang-new: not an option of sglang-9; the miles image builds its branch, which may add it and which "
        "rlcheck cannot read: not judged",
        "--xa: not an option of miles 1; --custom-generate-function-path m.g may add it (its generate function's "
        "add_arguments, which rlcheck cannot read without importing it): not judged",
        "not judged (options of a package outside the schema): --router-z"]


def test_verdict_fail_with_custom_notes_in_details():
    gen = _miles(opt(CUSTOM))
    verdict = fa.evaluate([CUSTOM, "m.g", "--xa", "--train-", "x"], gen, "how")
    assert verdict.status is Status.FAIL and verdict.summary.startswith("1 problem(s)")
    assert verdict.details.splitlines()[1].startswith("--xa: not an option of miles 1;")


@pytest.mark.parametrize(("argv", "failure_id"), [
    (["--sglang-nope", "1"], "sglang-dead-flag"), (["--sglang-nope", "1", "--sglang-gone"], "sglang-dead-flag"),
    (["--sglang-nope", "1", "--nope"], "framework-arg-rejected"),
    (["--sglang-m", "1"], "framework-arg-rejected"),  # ambiguous, not dead
    (["--nope"], "framework-arg-rejected"),
])
def test_verdict_dead_sglang_flags_have_their_own_failure(argv, failure_id):
    verdict = fa.evaluate(argv, TOY, "how")
    assert (verdict.status, verdict.failure_id, verdict.remedy) == (Status.FAIL, failure_id,
                                                                    catalog.get(failure_id).remedy)


# --- the committed schemas: the argvs with the real option names ----------------------------------------------

def test_miles_ambiguous_backend_prefix_names_the_candidates_as_argparse_does():
    verdict = fa.evaluate(["--train-", "fsdp"], MILES, "declared miles main")
    assert (verdict.status, verdict.summary) == (Status.FAIL, (
        "1 problem(s) in the argv as miles main (schema miles-main, declared miles main) parses it: --train-: the "
        "miles pre-parse of --train-backend (over its own options, with argparse's allow_abbrev) exits: 'ambiguous "
        "option: --train- could match --train-backend, --train-env-vars, --train-memory-margin-bytes'"))


@pytest.mark.parametrize(("argv", "problems"), [
    (["--train-back", "fsdp"], [("--train-back", "abbreviation")]),  # unique: the FSDP parser takes it
    (["--save", "/ckpt"], []),  # exact, though a prefix of --save-interval and more
    (["--sav", "/ckpt"], [("--sav", "ambiguous")]),
    (["--profile", "--lr", "1e-6"], [("--profile", "missing-value")]),
])
def test_miles_prefixes_on_the_committed_schema(argv, problems):
    assert [(f.flag, f.problem) for f in fa.judge(argv, MILES)[0]] == problems


def test_slime_sglang_prefix_of_two_names_of_one_option_is_ambiguous():
    [finding] = fa.judge(["--sglang-speculative-draft-model-p", "x"], SLIME)[0]
    assert finding.problem == "abbreviation"
    [finding] = fa.judge(["--sglang-speculative-draft-mod", "x"], SLIME)[0]
    assert (finding.problem, finding.text.split("could match ")[1].split(", ")[:2]) == (
        "ambiguous", ["--sglang-speculative-draft-model-path", "--sglang-speculative-draft-model"])


# --- options of a package branch the image builds over a release (Schema.unreleased) ----------------------------------

BRANCHED = _miles(opt("--sglang-mem-fraction-static", kind="float"), opt("--sglang-tp-size", kind="int"),
                  opt("--sglangx-foo"), unreleased=(
                      Unreleased(prefix="--sglang-", component="sg-9", branch="its branch",
                                 removed={"--sglang-old": "sg-8, not sg-9", "--sglang-port": "never"},
                                 release=frozenset({"--sglang-port", "--sglang-mem-fraction-static"})),
                      Unreleased(prefix="--eval-sglang-", component="sg-9", branch="its other branch", removed={},
                                 release=frozenset())))
REJECTED = "no miles 1 parser has it: rejected: unrecognized arguments"


@pytest.mark.parametrize(("argv", "expected"), [
    # the release has it and the framework leaves it out (the release wins over a removal on record)
    (["--sglang-port", "1"], [("--sglang-port", "unknown", f"--sglang-port: {REJECTED} (sg-9 has it; miles sets it "
                                                           "itself)")]),
    (["--sglang-old"], [("--sglang-old", "unknown", f"--sglang-old: {REJECTED} (the package removed it: sg-8, not "
                                                    "sg-9)")]),
    # a prefix of an option: this parser takes whole names only
    (["--sglang-mem", "0.5"], [("--sglang-mem", "unknown", f"--sglang-mem: {REJECTED} (abbreviates "
                                                           "--sglang-mem-fraction-static: this parser takes whole "
                                                           "names only)")]),
    # within two edits of an option under the prefix: a misspelling
    (["--sglang-mem-fracton-static", "0.5"],
     [("--sglang-mem-fracton-static", "unknown", f"--sglang-mem-fracton-static: {REJECTED} (a misspelling of "
                                                 "--sglang-mem-fraction-static?)")]),
    (["--sglang-tp-sizes", "2"], [("--sglang-tp-sizes", "unknown", f"--sglang-tp-sizes: {REJECTED} (a misspelling of "
                                                                   "--sglang-tp-size?)")]),
    # near an option outside the prefix only: the branch may add it
    (["--sglang-foo"], [("--sglang-foo", "unreleased", "--sglang-foo: not an option of sg-9; the miles image builds "
                                                       "its branch, which may add it and which rlcheck cannot read: "
                                                       "not judged")]),
    (["--eval-sglang-x"], [("--eval-sglang-x", "unreleased", "--eval-sglang-x: not an option of sg-9; the miles image "
                                                             "builds its other branch, which may add it and which "
                                                             "rlcheck cannot read: not judged")]),
    (["--other-x"], [("--other-x", "unknown", f"--other-x: {REJECTED}")]),
])
def test_unreleased_branch_options(argv, expected):
    assert found(argv, BRANCHED) == expected


@pytest.mark.parametrize(("name", "flag", "within"), [
    ("--abcdef", "--abcdef", True), ("--abcdefg", "--abcdef", True), ("--abcdefgh", "--abcdef", True),
    ("--abcdefghi", "--abcdef", False), ("--abcd", "--abcdef", True), ("--abc", "--abcdef", False),
    ("--abcxef", "--abcdef", True), ("--abxyef", "--abcdef", True), ("--axyzef", "--abcdef", False),
    ("--bacdef", "--abcdef", True),  # two letters swapped: two changes
    ("--zzzzzz", "--abcdef", False), ("--abcdxy", "--abcdef", True), ("xy--abcdef", "--abcdef", True),
    ("--abcdefxy", "--abcdef", True), ("--xyabcdef", "--abcdef", True), ("-", "--a", True), ("", "--a", False),
    ("--a-b-c-d", "--a-x-y-d", True), ("--a-b-c-d", "--x-y-z-d", False),
    ("--a", "--bbb", False), ("--a", "--b-b", False),  # three edits, the first a change
])
def test_misspells_at_most_two_edits(name, flag, within):
    assert fa._misspells(name, flag) is within
    assert fa._misspells(flag, name) is within  # the same count of edits either way
