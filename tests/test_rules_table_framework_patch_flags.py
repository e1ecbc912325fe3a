"""Where the schemas' added Megatron options come from, as a rule table (rlcheck/framework/patch_flags.py): SLIME's
image patch (add_argument lines, TransformerConfig fields), a Megatron branch's parser (its literals, its config
fields as the ArgumentGroupFactory types them, less its exclude list), Miles' FSDP dataclass and its generate
functions' add_arguments; each rule on both sides, each option in its whole shape, on small texts written here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from rlcheck.framework import patch_flags as pf

CONFIG = pf.CONFIG_FILE


def shape(flag: str, kind: str, group: str, default=None, **kw) -> dict:
    return {"flags": [flag], "group": group, "kind": kind, "dest": flag[2:].replace("-", "_"), "nargs": None,
            "choices": None, "default": default, **kw}


@pytest.mark.parametrize(("rest", "kind"), [
    ("action='store_true')", "store_true"), (' action = "count",', "count"), ("type=int, default=2)", "int"),
    ("type = float)", "float"), (")", "str"), ("default='x')", "str"), ("nargs='+', type=str)", "str"),
    ("action=SomeAction)", "str"),  # an action object, not a named one: read as a value
    ("action='append', type=int)", "append"),  # the action wins over the type
])
def test_argument_kind_from_the_rest_of_the_line(rest, kind):
    assert pf._argument_kind(rest) == kind


@pytest.mark.parametrize(("annotation", "kind"), [
    ("bool", "store_true"), ("int", "int"), ("float", "float"), ("str", "str"), (" int ", "int"),
    ("Optional[int]", "int"), ("int | None", "int"), ("Optional[str]", "str"),
    ("Optional[List[int]]", None), ("List[int]", None), ("ModuleSpec", None), ("Callable", None),
    ("Optional[int] | None", None),
])
def test_field_kind_of_an_annotation(annotation, kind):
    assert pf._field_kind(annotation) == kind


def _diff(path: str, *lines: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(("text", "options"), [
    (_diff("megatron/training/arguments.py", "+    group.add_argument('--use-gated-attention', action='store_true',"),
     [shape("--use-gated-attention", "store_true", "patch: megatron/training/arguments.py", False)]),
    (_diff("megatron/training/arguments.py", '+group.add_argument("--extra", type=int, default=2)'),
     [shape("--extra", "int", "patch: megatron/training/arguments.py")]),
    (_diff(CONFIG, "+    post_mlp_layernorm: bool = False", "+    index_topk: Optional[int] = None"),
     [shape("--post-mlp-layernorm", "store_true", f"patch: {CONFIG}", False),
      shape("--index-topk", "int", f"patch: {CONFIG}")]),
    # the first of two for one flag wins
    (_diff("a.py", "+p.add_argument('--x', type=int)", "+p.add_argument('--x', action='store_true')"),
     [shape("--x", "int", "patch: a.py")]),
    # a path without b/ is taken as written; a field outside the config file is not an option
    ("+++ megatron/x.py\n+    p.add_argument('--y')\n+    field_a: bool = False\n",
     [shape("--y", "str", "patch: megatron/x.py")]),
    # near misses: a removed or context line, an indented local, a type no command line carries, a short option,
    # an add_argument whose flag is not literal
    (_diff(CONFIG, "-    gone: bool = False", "     kept: bool = False", "+        local_name: bool = False",
           "+    spec: ModuleSpec = None", "+    p.add_argument('-s')", "+    p.add_argument(name)",
           "+    Upper: bool = False"), []),
    ("", []),
    # a line before any file header: no path
    ("+p.add_argument('--early')\n+    early_field: bool = False\n", [shape("--early", "str", "patch: ")]),
])
def test_patch_options_whole_shape(text, options):
    assert pf.patch_options(text) == options


def test_patch_options_follow_each_files_header():
    text = _diff("other.py", "+    flag_a: bool = False") + _diff(CONFIG, "+    flag_b: bool = False")
    assert [o["flags"] for o in pf.patch_options(text)] == [["--flag-b"]]
    text = _diff(CONFIG, "+    flag_a: bool = False") + _diff("other.py", "+    flag_b: bool = False")
    assert [o["flags"] for o in pf.patch_options(text)] == [["--flag-a"]]


@pytest.mark.parametrize(("kind", "default", "expected"), [
    ("store_true", None, False), ("store_true", True, True), ("int", None, None), ("int", 3, 3), ("str", "", ""),
])
def test_option_default_of_a_switch_is_false(kind, default, expected):
    assert pf._option("--a-b", kind, "g", default) == shape("--a-b", kind, "g", expected)


def test_source_options_every_add_argument_first_wins_within_its_call():
    text = textwrap.dedent('''
        def add_arguments(parser):
            parser.add_argument("--a-b", type=int, default=16)
            parser.add_argument(
                "--c",
                action="store_true",
            )
            parser.add_argument('--a-b', type=float)
            parser.add_argument(f"--{name}")
    ''')
    assert pf.source_options(text, "g") == [shape("--a-b", "int", "g"), shape("--c", "store_true", "g", False)]


def test_source_options_read_a_call_closed_within_200_characters():
    near = 'p.add_argument("--near",' + " " * 180 + "type=int)"
    far = 'p.add_argument("--far",' + " " * 210 + "type=int)"
    # a call whose closing parenthesis lies further is not read at all
    assert [(o["flags"][0], o["kind"]) for o in pf.source_options(near + "\n" + far, "g")] == [("--near", "int")]


def test_factory_exclude_reads_every_exclude_list():
    text = textwrap.dedent('''
        exclude = ["a", "b", 3]
        def f():
            exclude = ("c",)
            other = ["d"]
            x.exclude = ["e"]
            exclude = make()
    ''')
    assert pf._factory_exclude(text) == {"a", "b", "c"}
    assert pf._factory_exclude("") == set()


@pytest.mark.parametrize(("annotation", "facts"), [
    ("int", ("int", None, None)), ("bool", ("store_true", None, None)), ("Optional[float]", ("float", None, None)),
    ("str | None", ("str", None, None)), ("List[int]", ("int", "+", None)), ("list[float]", ("float", "+", None)),
    ("Optional[List[str]]", ("str", "+", None)), ("list[float] | None", ("float", "+", None)),
    ("List[bool]", None), ("List[ModuleSpec]", None),
    ("Literal['a', 'b']", ("str", None, ["a", "b"])), ("Literal[1, 2]", ("int", None, [1, 2])),
    ("Literal[0.5]", ("float", None, [0.5])), ("Optional[Literal['x']]", ("str", None, ["x"])),
    ("List[Literal['a']]", ("str", "+", ["a"])),
    ("Literal[1, 'a']", None), ("Literal[None]", None), ("Literal[True]", None), ("Literal[X.y]", None),
    ("Literal[1 +]", None), ("ModuleSpec", None), (" int ", ("int", None, None)),
])
def test_field_facts_as_megatrons_factory_types_a_field(annotation, facts):
    assert pf._field_facts(annotation) == facts


BRANCH = "branch: megatron/training/arguments.py"
FIELD = f"branch: {CONFIG}"


def test_branch_options_whole_shapes_sorted_by_flag():
    arguments = textwrap.dedent('''
        def _add(parser):
            exclude = ["hidden_size", "skipped_list"]
            parser.add_argument('--beta-fast', type=float, default=32)
            parser.add_argument('--known-one', action='store_true')
    ''')
    config = textwrap.dedent('''
        class TransformerConfig:
            hidden_size: int = 0
            skipped_list: List[int] = None
            freeze_gate: bool = False
            use_fused: bool = True
            ratios: Optional[List[int]] = None
            variant: Literal['a', 'b'] = 'a'
            renamed: Literal['e'] = field(default='e')
            sized: List[int] = field(default_factory=list)
            plain: int = field(default=1)
            spec: ModuleSpec = None
            beta_fast: float = 1.0
    ''')
    assert pf.branch_options(arguments, config, {"--known-one"}) == [
        shape("--beta-fast", "float", BRANCH),
        shape("--freeze-gate", "store_true", FIELD, False),
        {**shape("--no-use-fused", "store_false", FIELD), "flags": ["--no-use-fused", "--disable-use-fused"],
         "dest": "use_fused"},
        shape("--plain", "int", FIELD),
        shape("--ratios", "int", FIELD, nargs="+"),
        shape("--variant", "str", FIELD, choices=["a", "b"]),
    ]


@pytest.mark.parametrize(("known", "release", "held"), [
    ({"--variant"}, None, []),  # the release has it; no choices known for it: not held
    ({"--variant"}, {"--variant": ["a"]}, ["--variant"]),  # the branch offers other choices: held
    ({"--variant"}, {"--variant": ["a", "b"]}, []),  # the same choices
    ({"--variant"}, {"--variant": ["b", "a"]}, ["--variant"]),  # another order is another list
    ({"--variant"}, {"--variant": None}, []), ({"--variant"}, {"--other": ["a"]}, []),
    (set(), None, ["--variant"]), ({"--count"}, {"--count": [1]}, ["--variant"]),  # a field without choices: never
])
def test_branch_options_hold_a_known_flag_only_where_its_choices_change(known, release, held):
    config = "    variant: Literal['a', 'b'] = 'a'\n    count: int = 0\n"
    got = [o["flags"][0] for o in pf.branch_options("", config, known | {"--count"}, release)]
    assert got == held


def test_dataclass_options_one_per_field_after_config():
    text = textwrap.dedent('''
        @dataclass
        class FSDPArgs:
            """doc"""
            lr: float = 2e-5
            lr_decay_iters: int | None = None
            offload: bool = True
            backend: str | None = "gloo"
            config: str | None = None
            sizes: list = field(default_factory=list)
            flag: bool
            x = 3

        class Other:
            ignored: int = 3
    ''')
    assert pf.dataclass_options(text, "FSDPArgs", "g") == [
        shape("--config", "str", "g"), shape("--lr", "float", "g", 2e-5), shape("--lr-decay-iters", "int", "g"),
        shape("--offload", "bool_optional", "g", True), shape("--backend", "str", "g", "gloo"),
        shape("--sizes", "list", "g"), shape("--flag", "bool_optional", "g"),
    ]
    assert pf.dataclass_options(text, "Missing", "g") == [shape("--config", "str", "g")]


def test_miles_components_from_the_sources_read():
    files = {
        ("megatron", "megatron/training/arguments.py"): "p.add_argument('--beta-fast', type=float)\n",
        ("megatron", CONFIG): "    freeze_gate: bool = False\n",
        ("miles", pf.MILES_FSDP_FILE): "class FSDPArgs:\n    lr: float = 1.0\n",
        ("miles", "miles/rollout/generate_hub/multi_turn.py"): "p.add_argument('--max-turns', type=int)\n",
        ("miles", "miles/rollout/generate_hub/agentic_tool_call.py"): "p.add_argument('--tool-x')\n",
    }
    asked = []

    def read(tree, path):
        asked.append((tree, path))
        return files[(tree, path)]

    got = pf.miles_components(read, {"--freeze-gate"}, "radixark/miles@m", "radixark/Megatron-LM@b")
    assert got == {
        "miles-megatron-branch-main": {
            "name": "miles-megatron-branch-main",
            "source": f"radixark/Megatron-LM@b megatron/training/arguments.py, {CONFIG}; the options the release "
                      "component and Miles' own lack, and the release's whose choices it changes",
            "options": [shape("--beta-fast", "float", BRANCH)]},
        "miles-fsdp-main": {
            "name": "miles-fsdp-main", "source": f"radixark/miles@m {pf.MILES_FSDP_FILE} FSDPArgs (build_fsdp_parser)",
            "options": [shape("--config", "str", "fsdp: FSDPArgs"), shape("--lr", "float", "fsdp: FSDPArgs", 1.0)]},
        "miles-generate-multi-turn-main": {
            "name": "miles-generate-multi-turn-main",
            "source": "radixark/miles@m miles/rollout/generate_hub/multi_turn.py generate.add_arguments",
            "options": [shape("--max-turns", "int", "generate: miles.rollout.generate_hub.multi_turn.generate")]},
        "miles-generate-agentic-tool-call-main": {
            "name": "miles-generate-agentic-tool-call-main",
            "source": "radixark/miles@m miles/rollout/generate_hub/agentic_tool_call.py generate.add_arguments",
            "options": [shape("--tool-x", "str", "generate: miles.rollout.generate_hub.agentic_tool_call.generate")]},
    }
    assert len(asked) == 5
    changed = pf.miles_components(lambda tree, path: "    v: Literal['a', 'b'] = 'a'\n" if path == CONFIG else "",
                                  {"--v"}, "m", "b", {"--v": ["a"]})
    assert [o["flags"] for o in changed["miles-megatron-branch-main"]["options"]] == [["--v"]]


def test_component_from_patch_files_first_wins_sorted(tmp_path):
    first = tmp_path / "megatron.patch"
    first.write_text(_diff("a.py", "+p.add_argument('--z-last', type=int)", "+p.add_argument('--a-first')"))
    second = tmp_path / "megatron_extra.patch"
    second.write_bytes(_diff("b.py", "+p.add_argument('--z-last', action='store_true')", "+# \xff").encode("latin-1"))
    assert pf.component([first, second], "name-x", "repo@sha") == {
        "name": "name-x", "source": "repo@sha",
        "options": [shape("--a-first", "str", "patch: a.py"), shape("--z-last", "int", "patch: a.py")]}


def test_component_reads_a_patch_as_utf_8_whatever_the_locales_codec(tmp_path):
    """A patch is UTF-8 under any locale: in an ASCII locale (LC_ALL=C without Python's UTF-8 mode) a no-break space
    (a copy from a web page) would read as two replacement characters, and the option after it would be lost."""
    patch = tmp_path / "megatron.patch"
    patch.write_bytes(_diff("a.py", "+p.add_argument(\u00a0'--spaced', type=int)").encode("utf-8"))
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = ("import json, locale, sys; from rlcheck.framework import patch_flags as pf; "
            "print(locale.getpreferredencoding(False)); print(json.dumps(pf.component([pf.Path(sys.argv[1])], 'n', "
            "'s')))")
    # run from the test's own folder: `python -c` puts its working folder first on the path
    done = subprocess.run([sys.executable, "-c", code, str(patch)], env=env, capture_output=True, text=True,
                          timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    codec, component = done.stdout.splitlines()
    assert codec == "ANSI_X3.4-1968"  # the child's locale codec is ASCII: the rule is judged where it matters
    assert json.loads(component)["options"] == [shape("--spaced", "int", "patch: a.py")]
    # and here, in-process (where the mutation run sees which tests reach component): the same option
    assert pf.component([patch], "n", "s")["options"] == [shape("--spaced", "int", "patch: a.py")]


def test_main_prints_the_component(tmp_path, capsys):
    patch = tmp_path / "megatron.patch"
    patch.write_text(_diff("a.py", "+p.add_argument('--one', type=int)"))
    assert pf.main([str(patch), "--name", "n", "--source", "s"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and json.loads(out) == {"name": "n", "source": "s",
                                                       "options": [shape("--one", "int", "patch: a.py")]}
    assert out == json.dumps({"name": "n", "source": "s", "options": [shape("--one", "int", "patch: a.py")]},
                             indent=0, sort_keys=True) + "\n"


def test_main_help_names_the_command_and_each_argument(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as done:
        pf.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("usage: python -m rlcheck.framework.patch_flags ")
    for text in ("the image's megatron*.patch files", "the component's name (its file under components/)",
                 "repository, ref, commit and the patch paths it was read from"):
        assert re.search(rf"\S\s\s+{re.escape(text)}$", out, re.M), text  # its own help line, as written


def test_main_requires_name_and_source(tmp_path):
    with pytest.raises(SystemExit):
        pf.main([str(tmp_path / "x.patch"), "--name", "n"])
    with pytest.raises(SystemExit):
        pf.main([str(tmp_path / "x.patch"), "--source", "s"])
