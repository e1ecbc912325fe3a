"""The argument schemas as a rule table (rlcheck/framework/schema.py): an option's facts as loaded (prefix, the --no-
form argparse adds, dest, choices, required), which component options a framework skips and which it keeps (its own
add_argument wins; another condition makes a variant), what a loaded schema says (its source, parsers, conditions,
lookups), and the extraction from a source tree with ast (kinds, literals, reset_arg, the SGLang file's pre-parse,
skip lists) and from a live parser; on small data and sources written here."""

from __future__ import annotations

import argparse
import enum
import json
import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from rlcheck.framework import schema as fs
from rlcheck.framework.schema import Option, Parser, Schema


def raw_opt(*flags: str, kind: str = "str", **kw) -> dict:
    return {"flags": list(flags), "kind": kind, **kw}


# --- one option as loaded --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "args", "facts"), [
    (raw_opt("--lr", kind="float", group="g", dest="lr", nargs=None, default=1.0), {},
     dict(flags=("--lr",), group="g", kind="float", dest="lr", default=1.0, choices=None, required=False)),
    # a component's prefix replaces the dashes; its dest prefix goes before the dest
    (raw_opt("--tp-size", "--tensor-parallel-size", dest="tp_size"), dict(prefix="--sglang-", dest_prefix="sglang_"),
     dict(flags=("--sglang-tp-size", "--sglang-tensor-parallel-size"), dest="sglang_tp_size", group="")),
    (raw_opt("-x"), dict(prefix="--p-"), dict(flags=("--p-x",), dest="")),
    # BooleanOptionalAction: argparse adds --no-x for each long flag, once
    (raw_opt("--fp16", kind="bool_optional"), {}, dict(flags=("--fp16", "--no-fp16"))),
    (raw_opt("--a", "--no-a", kind="bool_optional"), {}, dict(flags=("--a", "--no-a"))),
    (raw_opt("--no-b", kind="bool_optional"), {}, dict(flags=("--no-b",))),
    (raw_opt("-c", "--cc", kind="bool_optional"), {}, dict(flags=("-c", "--cc", "--no-cc"))),
    (raw_opt("--d", kind="bool_optional"), dict(prefix="--p-"), dict(flags=("--p-d", "--no-p-d"))),
    (raw_opt("-X", "--Xla-flags"), dict(prefix="--p-"), dict(flags=("--p-X", "--p-Xla-flags"))),  # only dashes go
    (raw_opt("--e", kind="store_true"), {}, dict(flags=("--e",))),
    # choices as a tuple; required only when exactly True
    (raw_opt("--m", choices=["a", "b"]), {}, dict(choices=("a", "b"))),
    (raw_opt("--m", choices=[]), {}, dict(choices=())),
    (raw_opt("--r", required=True), {}, dict(required=True)),
    (raw_opt("--r", required="yes"), {}, dict(required=False)),
    (raw_opt("--n", nargs="+"), {}, dict(nargs="+")),
])
def test_option_as_loaded(raw, args, facts):
    got = fs._option(raw, "main", **args)
    assert {k: getattr(got, k) for k in facts} == facts
    assert got.parser == "main" and got.when is None


def test_option_carries_its_condition():
    assert fs._option(raw_opt("--x"), "p", when=("--b", "f")).when == ("--b", "f")


@pytest.mark.parametrize(("kind", "takes"), [
    ("str", True), ("int", True), ("append", True), ("AttnBackend", True), ("store_true", False),
    ("store_false", False), ("bool_optional", False), ("store_const", False), ("count", False),
])
def test_option_takes_values_by_kind(kind, takes):
    assert Option(flags=("--x",), parser="main", group="", kind=kind).takes_values is takes


@pytest.mark.parametrize(("raw", "skip", "skipped"), [
    (raw_opt("--model-path", dest="model_path"), {"model_path"}, True),
    (raw_opt("--model-path", dest="other", explicit_dest=True), {"model_path"}, False),  # skipped by its dest
    (raw_opt("--model-path", dest="other", explicit_dest=True), {"other"}, True),
    (raw_opt("--model-path", dest="other"), {"other"}, False),  # an implicit dest is not what the skip names
    (raw_opt("-m", "--model-path"), {"model_path"}, True),  # the first long flag
    (raw_opt("-m"), {"m"}, False), (raw_opt("-m"), set(), False),
    (raw_opt("--a", "--b-c"), {"b_c"}, False),
])
def test_skipped_by_explicit_dest_else_first_long_flag(raw, skip, skipped):
    assert fs._skipped(raw, skip) is skipped


# --- a schema as loaded ----------------------------------------------------------------------------------------------

def write(data: Path, name: str, doc: dict, component: bool = False) -> None:
    folder = data / "components" if component else data
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(doc), encoding="utf-8")


BASE = {"framework": "miles", "version": "main", "source": "repo@sha",
        "parsers": {"main": {"abbrev": False, "lenient": False, "abbrev_when": ["--train-backend", "fsdp"]},
                    "sglang": {"abbrev": True, "lenient": True}}}


def test_load_merges_components_as_the_framework_adds_them(tmp_path):
    write(tmp_path, "t-main", {**BASE, "options": [
        raw_opt("--fp16", kind="store_true", parser="main", dest="fp16"),
        raw_opt("--own", parser="main", dest="own", required=True),
    ], "components": [
        {"name": "meg", "parser": "main", "when": ["--train-backend", "megatron"]},
        {"name": "fsdp", "parser": "main", "when": ["--train-backend", "fsdp"]},
        {"name": "sg", "parser": "sglang", "prefix": "--sglang-", "dest_prefix": "sglang_", "skip": ["port"]},
        {"name": "sg", "parser": "main", "prefix": "--eval-sglang-", "dest_prefix": "eval_sglang_"},
    ], "opaque_prefixes": ["--router-"], "backend_abbrev": True})
    write(tmp_path, "meg", {"options": [raw_opt("--fp16", kind="store_true"), raw_opt("--bf16", kind="store_true"),
                                        raw_opt("--lr", kind="float"), raw_opt("--lr", kind="int")]}, component=True)
    write(tmp_path, "fsdp", {"options": [raw_opt("--bf16", kind="bool_optional"), raw_opt("--lr", kind="float"),
                                         raw_opt("--own")]}, component=True)
    write(tmp_path, "sg", {"options": [raw_opt("--port", dest="port"), raw_opt("--tp-size", dest="tp_size")]},
          component=True)
    got = fs.load("t-main", tmp_path)
    assert (got.name, got.framework, got.version, got.source) == ("t-main", "miles", "main",
                                                                  "repo@sha (+ meg, fsdp, sg, sg)")
    assert got.parsers == (Parser(name="main", abbrev=False, lenient=False, abbrev_when=("--train-backend", "fsdp")),
                           Parser(name="sglang", abbrev=True, lenient=True))
    assert (got.opaque_prefixes, got.backend_abbrev, got.unreleased) == (("--router-",), True, ())
    assert [(o.flags, o.parser, o.kind, o.when) for o in got.options] == [
        (("--fp16",), "main", "store_true", None), (("--own",), "main", "str", None),
        # Megatron's --fp16 is the framework's own already; its first --lr wins over its second
        (("--bf16",), "main", "store_true", ("--train-backend", "megatron")),
        (("--lr",), "main", "float", ("--train-backend", "megatron")),
        # under another condition the same flag is a variant; the framework's own --own still wins
        (("--bf16", "--no-bf16"), "main", "bool_optional", ("--train-backend", "fsdp")),
        (("--lr",), "main", "float", ("--train-backend", "fsdp")),
        (("--sglang-tp-size",), "sglang", "str", None),  # --port skipped
        (("--eval-sglang-port",), "main", "str", None), (("--eval-sglang-tp-size",), "main", "str", None),
    ]
    assert got.by_flag["--lr"].when == ("--train-backend", "megatron")
    assert [o.when for o in got.variants["--lr"]] == [("--train-backend", "megatron"), ("--train-backend", "fsdp")]
    assert got.by_flag["--sglang-tp-size"].dest == "sglang_tp_size" and got.by_flag["--own"].required
    assert got.parser("sglang").abbrev and got.parser("main").abbrev_when == ("--train-backend", "fsdp")
    assert fs.load("t-main", tmp_path) is got  # read once


def test_load_defaults_of_a_bare_schema(tmp_path):
    write(tmp_path, "bare", {"framework": "slime", "version": "0.2.4", "source": "s",
                             "parsers": {"main": {"abbrev": False, "lenient": True}}, "options": [],
                             "backend_abbrev": "yes"})
    got = fs.load("bare", tmp_path)
    assert (got.source, got.options, got.opaque_prefixes, got.backend_abbrev, got.generate_paths) == (
        "s (+ )", (), (), False, frozenset())


def test_load_names_the_schemas_there_are(tmp_path):
    write(tmp_path, "b-one", {})
    write(tmp_path, "a-two", {})
    write(tmp_path, "comp", {}, component=True)
    with pytest.raises(FileNotFoundError) as err:
        fs.load("nope", tmp_path)
    assert str(err.value) == f"no argument schema 'nope' in {tmp_path}: there are a-two, b-one"


def test_schema_lookups_and_generate_paths():
    gen = ("--custom-generate-function-path", "m.gen")
    options = (Option(flags=("--a", "--b"), parser="main", group="", kind="str"),
               Option(flags=("--b",), parser="main", group="", kind="int", when=("--x", "1")),
               Option(flags=("--t",), parser="main", group="", kind="int", when=gen),
               Option(flags=("--u",), parser="main", group="", kind="int", when=("--other", "m.other")))
    made = Schema(name="n", framework="miles", version="v", source="s",
                  parsers=(Parser(name="main", abbrev=False, lenient=False, abbrev_when=["--x", "1"]),),
                  options=options)
    assert made.by_flag == {"--a": options[0], "--b": options[0], "--t": options[2], "--u": options[3]}
    assert made.variants["--b"] == (options[0], options[1]) and made.variants["--a"] == (options[0],)
    assert made.generate_paths == frozenset({"m.gen"})
    assert made.parsers[0].abbrev_when == ("--x", "1")  # JSON's list made a tuple
    with pytest.raises(StopIteration):
        made.parser("sglang")


def test_committed_schemas_load_as_the_tool_loads_them():
    for name in ("slime-v0.2.4", "slime-v0.3.1", "slime-main", "miles-main"):
        loaded = fs.load(name)
        assert loaded.by_flag["--rollout-batch-size"].required and loaded.name == name
    assert fs.DEFAULT_SCHEMA == {"slime": "slime-v0.2.4", "miles": "miles-main"}


# --- extraction from a source tree -----------------------------------------------------------------------------------

SOURCE = textwrap.dedent('''
    import argparse
    def add_rollout_arguments(parser):
        parser.add_argument("--rollout-batch-size", type=int, required=True)
        parser.add_argument("--mode", choices=["a", "b"], default="a", help="x")
        parser.add_argument("--flag", action="store_true")
        parser.add_argument("--opt", action=argparse.BooleanOptionalAction, default=True)
        parser.add_argument("--other-action", action=CustomAction)
        parser.add_argument("--typed", type=some.module.convert, dest="custom_dest", nargs="+")
        parser.add_argument("--bool-opt", action="BooleanOptionalAction")
        parser.add_argument("-s", "--short", type=float)
        parser.add_argument(name_variable)
        parser.add_argument("positional")
        parser.add_argument()
        parser.add_argument("--maybe", required=flag_var, default=compute(), choices={[1]: 2})
        reset_arg(parser, "--reset", type=int, default=4)
        reset_arg(parser)
        temp_parser.add_argument("--width", type=int)
    class Holder:
        async def add_async(self, parser):
            parser.add_argument("--in-async")
    parser.add_argument("--top-level")
''')


def test_extract_file_every_kind_and_literal(tmp_path):
    path = tmp_path / "arguments.py"
    path.write_text(SOURCE, encoding="utf-8")
    options, skipped = fs.extract_file(path, "main")
    def fact(o):
        return (o["flags"], o["group"], o["kind"], o["dest"], o["nargs"], o["choices"], o["default"],
                o.get("required"), o.get("reset_arg"), o["parser"])
    g = "add_rollout_arguments"
    assert [fact(o) for o in options] == [
        (["--rollout-batch-size"], g, "int", "rollout_batch_size", None, None, None, True, None, "main"),
        (["--mode"], g, "str", "mode", None, ["a", "b"], "a", None, None, "main"),
        (["--flag"], g, "store_true", "flag", None, None, None, None, None, "main"),
        (["--opt"], g, "bool_optional", "opt", None, None, True, None, None, "main"),
        (["--other-action"], g, "other", "other_action", None, None, None, None, None, "main"),
        (["--typed"], g, "some.module.convert", "custom_dest", "+", None, None, None, None, "main"),
        (["--bool-opt"], g, "bool_optional", "bool_opt", None, None, None, None, None, "main"),
        (["-s", "--short"], g, "float", "short", None, None, None, None, None, "main"),
        (["--maybe"], g, "str", "maybe", None, None, None, None, None, "main"),
        (["--reset"], g, "int", "reset", None, None, 4, None, True, "main"),
        (["--width"], g, "int", "width", None, None, None, None, None, "main"),
        (["--in-async"], "add_async", "str", "in_async", None, None, None, None, None, "main"),
        (["--top-level"], "", "str", "top_level", None, None, None, None, None, "main"),
    ]
    lines = [i for i, line in enumerate(SOURCE.splitlines(), 1) if "name_variable" in line or '"positional"' in line
             or line.strip() == "parser.add_argument()"]
    assert skipped == [f"arguments.py:{n}" for n in lines]


@pytest.mark.parametrize("flags", [
    ["-s", "--short"], ["--long-one", "-l"], ["-x"], ["-X", "-Y"], ["--a-b", "--c-d"], ["-s", "--two-words", "--t"],
    ["--x"], ["-n", "--num-gpus-per-node"], ["--already_underscored"], ["-a-b"], ["-", "--x"],
])
def test_an_options_default_dest_is_the_one_argparse_gives_it(flags):
    assert fs.default_dest(flags) == argparse.ArgumentParser().add_argument(*flags).dest


def test_extract_file_leaves_the_sglang_files_pre_parse_out(tmp_path):
    path = tmp_path / "arguments.py"
    path.write_text(SOURCE, encoding="utf-8")
    options, _ = fs.extract_file(path, "sglang")
    assert "--width" not in {f for o in options for f in o["flags"]}
    assert {o["parser"] for o in options} == {"sglang"}


def test_extract_file_receivers_other_than_a_name(tmp_path):
    """add_argument on an attribute (self.parser) or on a call's result is read like one on a name; only a parser
    named temp_parser is the SGLang file's pre-parse. An option with a short flag only takes it as its dest, as
    argparse does."""
    path = tmp_path / "arguments.py"
    path.write_text(textwrap.dedent('''
        class SglangArgs:
            def add(self):
                self.parser.add_argument("--sglang-mem-fraction-static", type=float, default=0.8)
                self.parser.add_argument_group("router").add_argument("--sglang-router-port", type=int)
                self.temp_parser.add_argument("--sglang-dp-size", type=int)
                temp_parser.add_argument("--sglang-tp-size", type=int)
        def add_debug_arguments(parser):
            parser.add_argument("-X", type=int)
    '''), encoding="utf-8")
    options, skipped = fs.extract_file(path, "sglang")
    assert [(o["flags"], o["group"], o["kind"], o["dest"], o["default"]) for o in options] == [
        (["--sglang-mem-fraction-static"], "add", "float", "sglang_mem_fraction_static", 0.8),
        (["--sglang-router-port"], "add", "int", "sglang_router_port", None),
        (["--sglang-dp-size"], "add", "int", "sglang_dp_size", None),
        (["-X"], "add_debug_arguments", "int", "X", None)]
    assert skipped == []


def _utf8_tree(root: Path) -> None:
    """SLIME-like sources in UTF-8: comments in Chinese, a help string with an em dash."""
    (root / "slime" / "backends" / "sglang_utils").mkdir(parents=True)
    (root / "slime" / "utils").mkdir(parents=True)
    (root / "slime" / "utils" / "arguments.py").write_text(
        "def add_rollout_arguments(parser):\n    # 每个提示的采样数\n"
        "    parser.add_argument('--n-samples-per-prompt', type=int, default=1, help='samples — per prompt')\n",
        encoding="utf-8")
    (root / "slime" / "backends" / "sglang_utils" / "arguments.py").write_text(
        "# 这些参数由 SLIME 自己设置\nskipped_args = ['model_path', 'port']\n", encoding="utf-8")


UTF8_TREE = {"options": [{"flags": ["--n-samples-per-prompt"], "parser": "main", "group": "add_rollout_arguments",
                          "kind": "int", "dest": "n_samples_per_prompt", "nargs": None, "choices": None, "default": 1}],
             "not_literal": [], "skip_lists": {"skipped_args": ["model_path", "port"]}}


def test_main_tree_reads_sources_as_utf_8_whatever_the_locales_codec(tmp_path, capsys):
    """A framework's source is UTF-8: in an ASCII locale (LC_ALL=C without Python's UTF-8 mode) the locale's codec
    could not decode it, and the tree command would end in a traceback."""
    _utf8_tree(tmp_path)
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = ("import locale, sys; from rlcheck.framework import schema as fs; "
            "print(locale.getpreferredencoding(False)); sys.exit(fs.main(['tree', sys.argv[1]]))")
    # run from the test's own folder: `python -c` puts its working folder first on the path
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    codec, tree = done.stdout.split("\n", 1)
    assert codec == "ANSI_X3.4-1968"  # the child's locale codec is ASCII: the rule is judged where it matters
    assert json.loads(tree) == UTF8_TREE
    # and here, in-process (where the mutation run sees which tests reach extract_file and skip_lists): the same
    assert fs.main(["tree", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == UTF8_TREE


def test_skip_lists_read_every_list_named_skipped(tmp_path):
    folder = tmp_path / "pkg" / "sglang_utils"
    folder.mkdir(parents=True)
    (folder / "arguments.py").write_text(textwrap.dedent('''
        skipped_args = ["model_path", "port"]
        SKIPPED_EVAL = ["tp_size"]
        skipped_tuple = ("a",)
        skipped_computed = make()
        kept = ["x"]
        obj.skipped = ["y"]
    '''), encoding="utf-8")
    (tmp_path / "other.py").write_text("skipped = ['no']\n", encoding="utf-8")
    assert fs.skip_lists(tmp_path) == {"skipped_args": ["model_path", "port"], "SKIPPED_EVAL": ["tp_size"]}


def test_from_argparse_facts_of_a_live_parser():
    parser = argparse.ArgumentParser(add_help=True)
    group = parser.add_argument_group("my group")
    group.add_argument("--lr", type=float, default=1e-6)
    parser.add_argument("--flag", action="store_true")
    parser.add_argument("--off", action="store_false")
    parser.add_argument("--v", action="count")
    parser.add_argument("--opt", action=argparse.BooleanOptionalAction)
    parser.add_argument("--const", action="store_const", const=3)
    parser.add_argument("--tag", action="append")
    parser.add_argument("--mode", choices=["a", 2, 1.5, None], nargs="+", default=[1])
    parser.add_argument("--path", type=Path, nargs="?", default=Path("/x"))
    parser.add_argument("--n", type=int, nargs=2)
    parser.add_argument("--lam", type=lambda s: s)
    parser.add_argument("positional")
    got = {o["flags"][0]: o for o in fs.from_argparse(parser)}
    assert list(got) == ["--lr", "--flag", "--off", "--v", "--opt", "--const", "--tag", "--mode", "--path", "--n",
                         "--lam"]
    assert got["--lr"] == {"flags": ["--lr"], "group": "my group", "kind": "float", "dest": "lr", "nargs": None,
                           "choices": None, "default": 1e-6}
    assert {f: o["kind"] for f, o in got.items()} == {
        "--lr": "float", "--flag": "store_true", "--off": "store_false", "--v": "count", "--opt": "bool_optional",
        "--const": "store_const", "--tag": "append", "--mode": "str", "--path": "Path", "--n": "int",
        "--lam": "<lambda>"}
    assert (got["--mode"]["choices"], got["--mode"]["default"], got["--mode"]["nargs"]) == (["a", 2, 1.5, "None"],
                                                                                          None, "+")
    assert (got["--path"]["default"], got["--path"]["nargs"], got["--n"]["nargs"]) == (None, "?", 2)
    assert (got["--flag"]["default"], got["--off"]["default"], got["--opt"]["flags"]) == (False, True,
                                                                                         ["--opt", "--no-opt"])
    assert got["--flag"]["group"] in ("options", "optional arguments")


def test_main_tree_extracts_every_arguments_file(tmp_path, capsys):
    (tmp_path / "pkg" / "sglang_utils").mkdir(parents=True)
    (tmp_path / "pkg" / "tests").mkdir(parents=True)
    (tmp_path / "pkg" / "arguments.py").write_text("def a(p):\n    p.add_argument('--main-x')\n", encoding="utf-8")
    (tmp_path / "pkg" / "sglang_utils" / "arguments.py").write_text(
        "skipped = ['port']\ndef a(p):\n    p.add_argument('--sg-x')\n    temp_parser.add_argument('--w')\n"
        "    p.add_argument(v)\n", encoding="utf-8")
    (tmp_path / "pkg" / "tests" / "arguments.py").write_text("p.add_argument('--test-x')\n", encoding="utf-8")
    (tmp_path / "pkg" / "dash_arguments.py").write_text("p.add_argument('--dash-x')\np.add_argument(v)\n",
                                                        encoding="utf-8")
    (tmp_path / "pkg" / "args.py").write_text("p.add_argument('--not-read')\n", encoding="utf-8")
    (tmp_path / "pkg" / "more_arguments.py").write_text("p.add_argument('--more-x')\n", encoding="utf-8")
    assert fs.main(["tree", str(tmp_path), "--sglang-file", "pkg/sglang_utils/arguments.py",
                    "--exclude", "pkg/dash_arguments.py", "--exclude", "pkg/more_arguments.py"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(o["flags"], o["parser"]) for o in out["options"]] == [(["--main-x"], "main"), (["--sg-x"], "sglang")]
    assert out["not_literal"] == ["arguments.py:5"] and out["skip_lists"] == {"skipped": ["port"]}
    assert fs.main(["tree", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    out = json.loads(text)
    assert text == json.dumps(out, indent=0, sort_keys=True)  # one key a line, sorted, no newline after
    assert out["not_literal"] == ["dash_arguments.py:2", "arguments.py:5"]  # every file's, in path order
    assert [(o["flags"], o["parser"]) for o in out["options"]] == [
        (["--main-x"], "main"), (["--dash-x"], "main"), (["--more-x"], "main"), (["--sg-x"], "main"),
        (["--w"], "main")]


def test_main_refuses_another_command(capsys):
    with pytest.raises(SystemExit) as done:
        fs.main(["pip"])
    assert done.value.code == 2
    assert "argument what: invalid choice: 'pip' (choose from 'tree', 'megatron', 'sglang')" in capsys.readouterr().err


@pytest.mark.parametrize(("kind", "module", "name", "explicit"), [
    ("megatron", "megatron.training.arguments", "megatron-core-0.99", False),
    ("sglang", "sglang.srt.server_args", "sglang-0.99", True),
])
def test_component_from_the_installed_packages_function(kind, module, name, explicit):
    """Which module, which function in it and which distribution's version name the component (a stand-in module
    here: importing Megatron or SGLang is no part of this table)."""
    loaded, asked = [], []
    server_args = type("ServerArgs", (), {"add_cli_args": staticmethod(_server_args)})
    stand_in = type("Module", (), {"add_megatron_arguments": staticmethod(_server_args), "ServerArgs": server_args})

    def load(path):
        loaded.append(path)
        return stand_in

    def version(dist):
        asked.append(dist)
        return "0.99"

    got = fs._component(kind, load=load, version=version)
    assert (loaded, asked, got["name"]) == ([module], [name.rsplit("-", 1)[0]], name)
    assert [o.get("explicit_dest", False) for o in got["options"]] == [False, explicit]


def test_component_by_default_imports_the_module_and_asks_the_installed_metadata(monkeypatch):
    # a kind whose module is the standard library's and whose function adds nothing: the real import and metadata
    monkeypatch.setitem(fs.PACKAGES, "stdlib", ("argparse", ("ArgumentParser", "add_argument_group"), "pytest", False))
    assert fs._component("stdlib") == {"name": f"pytest-{metadata.version('pytest')}", "options": []}


def _server_args(parser):
    """A stand-in for an installed package's add-arguments function (ServerArgs.add_cli_args' shape)."""
    parser.add_argument("--model-path", type=str)
    parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, dest="tp_size")
    parser.add_argument("positional")


def test_component_of_marks_explicit_dests_only_when_asked():
    assert fs.component_of(_server_args, "sglang-9", record_dest=True) == {"name": "sglang-9", "options": [
        {"flags": ["--model-path"], "group": "options", "kind": "str", "dest": "model_path", "nargs": None,
         "choices": None, "default": None},
        {"flags": ["--tp-size", "--tensor-parallel-size"], "group": "options", "kind": "int", "dest": "tp_size",
         "nargs": None, "choices": None, "default": None, "explicit_dest": True}]}
    plain = fs.component_of(_server_args, "megatron-core-9")
    assert plain["name"] == "megatron-core-9" and all("explicit_dest" not in o for o in plain["options"])
    assert [o["flags"][0] for o in plain["options"]] == ["--model-path", "--tp-size"]


def test_component_of_builds_the_parser_as_the_frameworks_do():
    seen = []
    fs.component_of(lambda parser: seen.append((parser.allow_abbrev, parser.add_help)), "x")
    assert seen == [(False, False)]


class _Dtype(enum.Enum):
    BF16 = "bfloat16"
    FP8 = "fp8_e4m3"


class _NumpyLikeInt:
    """An integer that is not an int (a NumPy integer's shape: argparse takes it as nargs through __index__)."""

    def __index__(self) -> int:
        return 2


def test_from_argparse_values_json_cannot_hold_are_strings_or_none():
    """A choice that is not a number or a string is written as its str(); a nargs that is not an int or a string is
    left out (None): a component is JSON."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--kv-cache-dtype", type=_Dtype, choices=list(_Dtype))
    parser.add_argument("--dims", type=int, nargs=_NumpyLikeInt())
    got = fs.from_argparse(parser)
    assert [(o["flags"], o["choices"], o["nargs"]) for o in got] == [
        (["--kv-cache-dtype"], ["_Dtype.BF16", "_Dtype.FP8"], None), (["--dims"], None, None)]
    assert json.loads(json.dumps(got)) == got


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14 refuses to nest argument groups")
def test_from_argparse_an_option_of_a_nested_group_has_no_group():
    """A group made on a group (deprecated, but Python 3.12 and 3.13 build it) is not one of the parser's groups: its
    options are the parser's, under no group title ('')."""
    parser = argparse.ArgumentParser(add_help=False)
    outer = parser.add_argument_group("distributed")
    outer.add_argument("--tensor-model-parallel-size", type=int)
    with pytest.warns(DeprecationWarning, match="Nesting argument groups is deprecated"):
        inner = outer.add_argument_group("overlap")
    inner.add_argument("--overlap-grad-reduce", action="store_true")
    assert [(o["flags"], o["group"]) for o in fs.from_argparse(parser)] == [
        (["--tensor-model-parallel-size"], "distributed"), (["--overlap-grad-reduce"], "")]


def test_from_argparse_a_type_without_a_name_is_other():
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--file", type=argparse.FileType("r"))
    assert fs.from_argparse(parser)[0]["kind"] == "other"


@pytest.mark.parametrize("what", ["megatron", "sglang"])
def test_main_prints_the_installed_packages_component(monkeypatch, capsys, what):
    """The component command prints what _component builds from the installed package (here a stand-in: importing
    Megatron or SGLang is no part of this table)."""
    monkeypatch.setattr(fs, "_component", lambda kind: {"name": f"{kind}-9", "options": [{"b": 1, "a": 2}]})
    assert fs.main([what]) == 0
    out = capsys.readouterr().out
    assert out == f'{{\n"name": "{what}-9",\n"options": [\n{{\n"a": 2,\n"b": 1\n}}\n]\n}}'


def test_main_help_names_the_command_and_each_argument(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as done:
        fs.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("usage: python -m rlcheck.framework.schema ")
    for text in ("the tree's file whose options SLIME parses with its separate SGLang parser",
                 "a file under root to leave out", "{tree,megatron,sglang}"):
        assert re.search(rf"\S\s\s+{re.escape(text)}$", out, re.M), text  # its own help line, as written


def test_load_unreleased_entries_removed_and_release_flags_under_the_prefix(tmp_path):
    write(tmp_path, "u", {**BASE, "options": [], "unreleased": [
        {"prefix": "--sglang-", "component": "sg-new", "branch": "a branch",
         "dropped": {"before": "before 1", "flags": ["--gone-long-ago"]}, "older": ["sg-old"]},
        {"prefix": "--eval-sglang-", "component": "sg-new", "branch": "b"}]})
    write(tmp_path, "sg-new", {"options": [raw_opt("--kept"), raw_opt("--added", "-a"), raw_opt("--Xk")]},
          component=True)
    write(tmp_path, "sg-old", {"options": [raw_opt("--kept"), raw_opt("--removed"), raw_opt("--Xo")]},
          component=True)
    first, second = fs.load("u", tmp_path).unreleased
    assert first == fs.Unreleased(prefix="--sglang-", component="sg-new", branch="a branch", removed={
        "--sglang-gone-long-ago": "before 1", "--sglang-Xo": "sg-old, not sg-new",
        "--sglang-removed": "sg-old, not sg-new"},
        release=frozenset({"--sglang-kept", "--sglang-added", "--sglang-a", "--sglang-Xk"}))
    assert list(first.removed) == ["--sglang-gone-long-ago", "--sglang-Xo", "--sglang-removed"]  # dropped, then sorted
    assert second == fs.Unreleased(prefix="--eval-sglang-", component="sg-new", branch="b", removed={},
                                   release=frozenset({"--eval-sglang-kept", "--eval-sglang-added", "--eval-sglang-a",
                                                      "--eval-sglang-Xk"}))
