"""The Megatron options a framework's image adds by patch (SLIME's docker/patch/latest/megatron*.patch), as a schema
component: the facts only (flag names and kinds), never the patch.

SLIME builds its image by applying its own patch to Megatron-LM. The patch adds options two ways: an
`add_argument('--x', ...)` line, and a field of Megatron's TransformerConfig dataclass, which Megatron's argument
parser exposes as `--field-name` (SLIME's own scripts pass `--post-self-attn-layernorm` where only the field is
added). A launch using them is judged by the schema of that image, not by Megatron's release alone.

Build (from a fetched SLIME tree; the output is committed under rlcheck/data/frameworks/components/):
    python -m rlcheck.framework.patch_flags PATCH ... --name slime-megatron-patch-v0.2.4 --source "THUDM/slime@..."

Miles adds options three more ways, each a component of miles-main.json built by miles_components() from Miles'
tree and the Megatron branch its docker/Dockerfile clones (radixark/Megatron-LM miles-main; its options beyond the
release component: YaRN, the MoE router freezes), checked against those sources by
tests/test_framework_miles_parsers.py: the FSDP backend's parser (one option per FSDPArgs field, only with
--train-backend fsdp: the component's `when`) and a generate function's add_arguments (only with that
--custom-generate-function-path).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

CONFIG_FILE = "megatron/core/transformer/transformer_config.py"
_ADDED_ARGUMENT = re.compile(r"""^\+.*\badd_argument\(\s*['"](--[A-Za-z0-9][A-Za-z0-9_-]*)['"](.*)""")
_ADDED_FIELD = re.compile(r"^\+    ([a-z][a-z0-9_]*): ([A-Za-z][\w\[\] |]*?) = ")
_FIELD_KINDS = {"bool": "store_true", "int": "int", "float": "float", "str": "str"}


def _argument_kind(rest: str) -> str:
    """The kind of an added add_argument from the rest of its line (an action or a type; else a string value)."""
    if m := re.search(r"""action\s*=\s*['"](\w+)['"]""", rest):
        return m.group(1)
    if m := re.search(r"\btype\s*=\s*(\w+)", rest):
        return m.group(1)
    return "str"


def _field_kind(annotation: str) -> str | None:
    """The flag kind of a TransformerConfig field's annotation (Optional[int] and int | None read as int); None for
    a type Megatron does not expose on its command line (a module spec, a callable)."""
    base = re.sub(r"^Optional\[(\w+)\]$|^(\w+) \| None$", lambda m: m.group(1) or m.group(2), annotation.strip())
    return _FIELD_KINDS.get(base)


def patch_options(text: str) -> list[dict[str, Any]]:
    """The options a unified diff adds: add_argument lines anywhere, TransformerConfig fields in its file."""
    options: dict[str, dict[str, Any]] = {}
    path = ""
    for line in text.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
            continue
        flag, kind = None, None
        if m := _ADDED_ARGUMENT.match(line):
            flag, kind = m.group(1), _argument_kind(m.group(2))
        elif path == CONFIG_FILE and (m := _ADDED_FIELD.match(line)):
            kind = _field_kind(m.group(2))  # None: not an option (the test below)
            flag = f"--{m.group(1).replace('_', '-')}"
        if flag and kind and flag not in options:
            options[flag] = {"flags": [flag], "group": f"patch: {path}", "kind": kind,
                             "dest": flag[2:].replace("-", "_"), "nargs": None, "choices": None,
                             "default": False if kind == "store_true" else None}
    return list(options.values())


# --- options a framework adds outside its own add_argument literals (Miles) -----------------------------------------

_SOURCE_ARGUMENT = re.compile(r"""\badd_argument\(\s*['"](--[A-Za-z0-9][A-Za-z0-9_-]*)['"]((?:.|\n){0,200}?)\)""")
_CONFIG_FIELD = re.compile(r"^    ([a-z][a-z0-9_]*): ([A-Za-z][\w\[\] |]*?) = (\S+)", re.M)


def _option(flag: str, kind: str, group: str, default: Any = None) -> dict[str, Any]:
    return {"flags": [flag], "group": group, "kind": kind, "dest": flag[2:].replace("-", "_"), "nargs": None,
            "choices": None, "default": False if kind == "store_true" and default is None else default}


def source_options(text: str, group: str) -> list[dict[str, Any]]:
    """The options of every add_argument('--x', ...) in a Python source (a module's add_arguments)."""
    out: dict[str, dict[str, Any]] = {}
    for m in _SOURCE_ARGUMENT.finditer(text):
        out.setdefault(m.group(1), _option(m.group(1), _argument_kind(m.group(2)), group))
    return list(out.values())


def _factory_exclude(arguments: str) -> set[str]:
    """The TransformerConfig fields Megatron's parser leaves out (the exclude list its ArgumentGroupFactory gets)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(arguments)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "exclude" for t in node.targets):
            names |= {e.value for e in getattr(node.value, "elts", ())
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return names


_TYPED_FIELD = re.compile(r"^    ([a-z][a-z0-9_]*): ([A-Za-z][\w\[\] |,'\".]*?) = (\S+)", re.M)


def _field_facts(annotation: str) -> tuple[str, str | None, list[Any] | None] | None:
    """(kind, nargs, choices) of a TransformerConfig field as Megatron's ArgumentGroupFactory types it: Optional[X] /
    X | None is X, List[X] / list[X] is X with nargs '+', Literal[...] is its values' type with them as choices; None
    for a type it does not expose (a module spec, a callable)."""
    base = annotation.strip()
    if m := re.fullmatch(r"Optional\[(.*)\]|(.*?) \| None", base):
        base = (m.group(1) or m.group(2)).strip()
    if m := re.fullmatch(r"(?:List|list)\[(.*)\]", base):
        inner = _field_facts(m.group(1))
        return (inner[0], "+", inner[2]) if inner and inner[0] != "store_true" else None
    if m := re.fullmatch(r"Literal\[(.*)\]", base):
        try:
            choices = list(ast.literal_eval(f"({m.group(1)},)"))
        except (ValueError, SyntaxError):
            return None
        kinds = {type(c).__name__ for c in choices}
        kind = kinds.pop() if len(kinds) == 1 else None
        return (kind, None, choices) if kind in ("str", "int", "float") else None
    kind = _FIELD_KINDS.get(base)
    return (kind, None, None) if kind else None


def branch_options(arguments: str, config: str, known: set[str],
                   release_choices: dict[str, list[Any] | None] | None = None) -> list[dict[str, Any]]:
    """The options a Megatron branch's parser has that `known` (the release component's flags) lacks: its
    add_argument literals and its TransformerConfig fields (Megatron's ArgumentGroupFactory: a bool field defaulting
    to False is --x, one defaulting to True is --no-x and --disable-x; a list is nargs '+'; a Literal gives its
    choices; its exclude list is left out). A field the release has too is held when its Literal offers other choices
    than release_choices (flag -> the release's choices) says the release's does (the branch's `dsv4` attention)."""
    out = {o["flags"][0]: o for o in source_options(arguments, "branch: megatron/training/arguments.py")}
    exclude = _factory_exclude(arguments)
    changed: set[str] = set()
    for m in _TYPED_FIELD.finditer(config):
        name, facts = m.group(1), _field_facts(m.group(2))
        if facts is None or name in exclude:
            continue
        kind, nargs, choices = facts
        if (nargs or choices) and m.group(3).startswith("field("):  # its metadata may rename or retype it: not read
            continue
        flag, dashed = f"--{name.replace('_', '-')}", name.replace("_", "-")
        option = _option(flag, kind, "branch: " + CONFIG_FILE)
        if kind == "store_true" and m.group(3).startswith("True"):
            flag = f"--no-{dashed}"
            option = {**_option(flag, "store_false", "branch: " + CONFIG_FILE), "flags": [flag, f"--disable-{dashed}"],
                      "dest": name}
        option.update(nargs=nargs, choices=choices)
        out.setdefault(flag, option)
        release = (release_choices or {}).get(flag)
        if choices is not None and release is not None and list(release) != choices:
            changed.add(flag)
    return [o for f, o in sorted(out.items()) if f not in known or f in changed]


def dataclass_options(text: str, cls: str, group: str) -> list[dict[str, Any]]:
    """The options Miles' FSDP parser builds from a dataclass's fields (build_fsdp_parser: --config, then one option
    per field, '_' as '-'; a bool field is BooleanOptionalAction, T | None is T)."""
    out = [_option("--config", "str", group)]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for st in node.body:
                if not isinstance(st, ast.AnnAssign) or not isinstance(st.target, ast.Name) or st.target.id == "config":
                    continue
                ann = ast.unparse(st.annotation)
                base = re.sub(r"\s*\|\s*None$", "", ann)
                kind = "bool_optional" if base == "bool" else base
                try:
                    default = ast.literal_eval(st.value or ast.Constant(None))  # a field without one: None
                except (ValueError, SyntaxError):
                    default = None
                out.append(_option(f"--{st.target.id.replace('_', '-')}", kind, group, default))
    return out


MILES_GENERATE_MODULES = ("multi_turn", "agentic_tool_call")
"""Miles' generate functions with add_arguments (miles/rollout/generate_hub/<module>.py) its scripts name in
--custom-generate-function-path; Miles calls their add_arguments on its parser only when that path is given."""
MILES_FSDP_FILE = "miles/backends/fsdp_utils/arguments.py"


def miles_components(read: Callable[[str, str], str], known: set[str], miles_source: str,
                     megatron_source: str, release_choices: dict[str, list[Any] | None] | None = None
                     ) -> dict[str, dict[str, Any]]:
    """The components miles-main.json names beyond Megatron's release and SGLang, from the sources: read(tree, path)
    gives a file of tree 'miles' (Miles) or 'megatron' (the Megatron branch its docker/Dockerfile clones); known is
    the flags of the release component and Miles' own (the branch component holds only what they lack, and the
    release's options whose choices the branch changes: release_choices, flag -> the release's choices)."""
    branch = branch_options(read("megatron", "megatron/training/arguments.py"), read("megatron", CONFIG_FILE), known,
                            release_choices)
    out = {"miles-megatron-branch-main": (f"{megatron_source} megatron/training/arguments.py, {CONFIG_FILE}; the "
                                          "options the release component and Miles' own lack, and the release's "
                                          "whose choices it changes", branch),
           "miles-fsdp-main": (f"{miles_source} {MILES_FSDP_FILE} FSDPArgs (build_fsdp_parser)",
                               dataclass_options(read("miles", MILES_FSDP_FILE), "FSDPArgs", "fsdp: FSDPArgs"))}
    for mod in MILES_GENERATE_MODULES:
        path = f"miles/rollout/generate_hub/{mod}.py"
        out[f"miles-generate-{mod.replace('_', '-')}-main"] = (
            f"{miles_source} {path} generate.add_arguments",
            source_options(read("miles", path), f"generate: miles.rollout.generate_hub.{mod}.generate"))
    return {name: {"name": name, "source": source, "options": opts} for name, (source, opts) in out.items()}


def component(patches: Iterable[Path], name: str, source: str) -> dict[str, Any]:
    options: dict[str, dict[str, Any]] = {}
    for path in patches:
        for opt in patch_options(path.read_text(encoding="utf-8", errors="replace")):
            options.setdefault(opt["flags"][0], opt)
    return {"name": name, "source": source, "options": sorted(options.values(), key=lambda o: o["flags"][0])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rlcheck.framework.patch_flags")
    ap.add_argument("patches", nargs="+", type=Path, help="the image's megatron*.patch files")
    ap.add_argument("--name", required=True, help="the component's name (its file under components/)")
    ap.add_argument("--source", required=True, help="repository, ref, commit and the patch paths it was read from")
    args = ap.parse_args(argv)
    json.dump(component(args.patches, args.name, args.source), sys.stdout, indent=0, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
