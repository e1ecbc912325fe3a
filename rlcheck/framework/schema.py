"""Argument schemas: every option a framework's argparse parsers accept, as facts (names, types, choices, nargs,
literal defaults, owning parser and group), and each parser's leniency.

A framework schema (slime-v0.2.4.json, miles-main.json) holds the framework's own `add_argument` calls, read from its
source with `ast`, and names components built from the installed packages' live parsers (Megatron's
add_megatron_arguments, SGLang's ServerArgs.add_cli_args), which the framework adds to one of its parsers with a prefix
and a skip list. Build one with:

    python -m rlcheck.framework.schema tree SRC_ROOT --framework slime --ref v0.2.4 --commit SHA --version 0.2.4
    python -m rlcheck.framework.schema megatron | sglang      (components, from the installed packages)
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import importlib
import json
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "frameworks"
DEFAULT_SCHEMA = {"slime": "slime-v0.2.4", "miles": "miles-main"}
"""Which committed schema judges a job when the framework is not importable (SLIME v0.2.4: the reference image)."""
NUMERIC = {"int": int, "float": float}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Option:
    flags: tuple[str, ...]
    """Every option string of one add_argument call, e.g. ('--sglang-tp-size', '--sglang-tensor-parallel-size')."""
    parser: str
    """The parser that owns it ('main': Megatron's with the framework's own; 'sglang': SLIME's separate one)."""
    group: str
    """The add_*_arguments function or argparse group that adds it."""
    kind: str
    """'int', 'float', 'str', another type's name (not checked), 'store_true', 'store_false', 'bool_optional',
    'store_const', 'count' or 'append'."""
    dest: str = ""
    nargs: str | int | None = None
    choices: tuple[Any, ...] | None = None
    default: Any = None
    required: bool = False
    """add_argument(required=True): the parser exits when the argv lacks it (SLIME's --rollout-batch-size)."""
    when: tuple[str, str] | None = None
    """(option, value): the framework adds this option only when that option has that value in the argv, or by its
    default when the argv leaves it out (Miles: Megatron's options only with --train-backend megatron, its default;
    the FSDP parser's only with --train-backend fsdp; a --custom-generate-function-path module's add_arguments)."""

    @property
    def takes_values(self) -> bool:
        return self.kind not in ("store_true", "store_false", "bool_optional", "store_const", "count")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Parser:
    name: str
    abbrev: bool
    """argparse allow_abbrev: a unique prefix of an option selects it."""
    lenient: bool
    """parse_known_args: an option it does not know is dropped without a word, not an error."""
    abbrev_when: tuple[str, str] | None = None
    """(option, value): with that value (see Option.when) the framework builds this parser with argparse's default
    allow_abbrev=True (Miles' FSDP parser for --train-backend fsdp; Megatron's parser has allow_abbrev=False)."""

    def __post_init__(self) -> None:
        if self.abbrev_when is not None:  # JSON gives a list
            object.__setattr__(self, "abbrev_when", tuple(self.abbrev_when))


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Unreleased:
    """The options under prefix come from a branch of a package that the framework's image builds over the release
    `component` (Miles: SGLang's sglang-miles branch over v0.5.16), whose source rlcheck cannot read: an option there
    that the release lacks is not judged, unless the package removed it (`removed`: in an older release the schema
    names, or a flag the package is known to have dropped) or it misspells one the release has."""
    prefix: str
    component: str
    branch: str
    removed: dict[str, str]
    """Flag under prefix -> where it was last seen (e.g. '--sglang-enable-ep-moe' -> 'SGLang before 0.5.12')."""
    release: frozenset[str]
    """Every flag of the release under prefix, also those the framework skips (sets itself)."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Schema:
    name: str
    """File stem, e.g. 'slime-v0.2.4'."""
    framework: str
    version: str
    source: str
    """Where it was built from: repository, ref and commit, plus the components' package versions."""
    parsers: tuple[Parser, ...]
    options: tuple[Option, ...]
    opaque_prefixes: tuple[str, ...] = ()
    """Option prefixes added by a package outside the schema (SLIME's --router-* from sglang_router): accepted, not
    type-checked, and named in the verdict's details."""
    backend_abbrev: bool = False
    """The framework picks its backend by a pre-parse of --train-backend over its own options (those under no `when`)
    that takes unique prefixes (Miles' parse_args_train_backend: argparse's default allow_abbrev), so `--train-back
    fsdp` is the FSDP backend; False: the whole flag only (SLIME's _pre_parse_mode sets allow_abbrev=False)."""
    unreleased: tuple[Unreleased, ...] = ()
    """Prefixes whose options come from a branch of a package that the framework's image builds over a release."""

    @property
    def generate_paths(self) -> frozenset[str]:
        """The --custom-generate-function-path values whose add_arguments options the schema holds."""
        return frozenset(o.when[1] for o in self.options if o.when and o.when[0] == "--custom-generate-function-path")

    by_flag: dict[str, Option] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """Option string -> its first option (filled from options)."""
    variants: dict[str, tuple[Option, ...]] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """Option string -> every option holding it, each under its own `when` (Megatron's --fp16 with --train-backend
    megatron, the FSDP parser's --fp16/--no-fp16 with fsdp), in load order."""

    def __post_init__(self) -> None:
        for o in self.options:
            for f in o.flags:
                self.by_flag.setdefault(f, o)
                self.variants[f] = (*self.variants.get(f, ()), o)

    def parser(self, name: str) -> Parser:
        return next(p for p in self.parsers if p.name == name)


def _option(raw: dict[str, Any], parser: str, prefix: str = "", dest_prefix: str = "",
            when: tuple[str, str] | None = None) -> Option:
    flags = tuple(prefix + f.lstrip("-") if prefix else f for f in raw["flags"])
    if raw["kind"] == "bool_optional":  # argparse adds the --no- form itself
        flags = tuple(dict.fromkeys(flags + tuple(f"--no-{f[2:]}" for f in flags if f.startswith("--")
                                                  and not f.startswith("--no-"))))
    choices = tuple(raw["choices"]) if raw.get("choices") is not None else None
    return Option(flags=flags, parser=parser, group=raw.get("group", ""), kind=raw["kind"],
                  dest=dest_prefix + raw.get("dest", ""), nargs=raw.get("nargs"), choices=choices,
                  default=raw.get("default"), required=raw.get("required") is True, when=when)


def _skipped(raw: dict[str, Any], skip: set[str]) -> bool:
    """The frameworks skip a ServerArgs option by its explicit dest, else by its first long flag."""
    long = next((f[2:].replace("-", "_") for f in raw["flags"] if f.startswith("--")), None)
    return (raw.get("dest") if raw.get("explicit_dest") else long) in skip


@functools.cache
def load(name: str, data_dir: Path = DATA_DIR) -> Schema:
    """A committed schema with its components merged in; FileNotFoundError lists the ones there are."""
    path = data_dir / f"{name}.json"
    if not path.is_file():
        there = ", ".join(sorted(p.stem for p in data_dir.glob("*.json")))
        raise FileNotFoundError(f"no argument schema {name!r} in {data_dir}: there are {there}")
    raw = json.loads(path.read_text(encoding="utf-8"))
    options = [_option(o, o["parser"]) for o in raw["options"]]
    known: dict[str, set[tuple[str, str] | None]] = {}  # flag -> the conditions it is already held under
    for opt in options:
        for f in opt.flags:
            known.setdefault(f, set()).add(None)
    for comp in raw.get("components", ()):
        part = json.loads((data_dir / "components" / f"{comp['name']}.json").read_text(encoding="utf-8"))
        skip = set(comp.get("skip", ()))
        when = tuple(comp["when"]) if comp.get("when") else None
        for o in part["options"]:
            if _skipped(o, skip):
                continue
            opt = _option(o, comp["parser"], comp.get("prefix", ""), comp.get("dest_prefix", ""), when)
            # The framework's own add_argument (or reset_arg) wins, and so does an earlier component under the same
            # condition; under another condition the flag is a variant (Megatron's --fp16 and the FSDP parser's).
            if not any(None in known.get(f, ()) or when in known.get(f, ()) for f in opt.flags):
                options.append(opt)
                for f in opt.flags:
                    known.setdefault(f, set()).add(when)
    parsers = tuple(Parser(name=n, **p) for n, p in raw["parsers"].items())
    source = f"{raw['source']} (+ {', '.join(c['name'] for c in raw.get('components', ()))})"
    return Schema(name=name, framework=raw["framework"], version=raw["version"], source=source, parsers=parsers,
                  options=tuple(options), opaque_prefixes=tuple(raw.get("opaque_prefixes", ())),
                  backend_abbrev=raw.get("backend_abbrev") is True,
                  unreleased=tuple(_unreleased(u, data_dir) for u in raw.get("unreleased", ())))


@functools.cache
def _flags(name: str, data_dir: Path) -> frozenset[str]:
    """The flags of one committed component (read once: a schema's `unreleased` entries name the same ones)."""
    part = json.loads((data_dir / "components" / f"{name}.json").read_text(encoding="utf-8"))
    return frozenset(f for o in part["options"] for f in o["flags"])


def _unreleased(raw: dict[str, Any], data_dir: Path) -> Unreleased:
    """An `unreleased` entry: its removed flags are those of each older release it names that its own release lacks,
    and the ones it lists as dropped before them."""
    base = _flags(raw["component"], data_dir)
    removed = {f: raw["dropped"]["before"] for f in raw.get("dropped", {}).get("flags", ())}
    for older in raw.get("older", ()):
        removed.update({f: f"{older}, not {raw['component']}" for f in sorted(_flags(older, data_dir) - base)})
    prefix = raw["prefix"]
    return Unreleased(prefix=prefix, component=raw["component"], branch=raw["branch"],
                      removed={prefix + f.lstrip("-"): seen for f, seen in removed.items()},
                      release=frozenset(prefix + f.lstrip("-") for f in base))


# --- extraction from a source tree (ast: the framework's own add_argument calls) ---------------------------------

def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, SyntaxError, TypeError):
        return None


def _kind(kw: dict[str, ast.expr]) -> str:
    action = kw.get("action")
    if action is not None:
        name = _literal(action) if isinstance(action, ast.Constant) else getattr(action, "attr", "other")
        return {"BooleanOptionalAction": "bool_optional"}.get(name, name)
    typ = kw.get("type")
    if typ is None:
        return "str"
    return typ.id if isinstance(typ, ast.Name) else ast.unparse(typ)


def _calls(tree: ast.AST):
    """(enclosing function, receiver name, call) for every add_argument / reset_arg call, in source order."""
    def walk(node: ast.AST, func: str):
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Call):
                f = child.func
                if isinstance(f, ast.Attribute) and f.attr == "add_argument":
                    yield name, getattr(f.value, "id", ""), child, child.args
                elif isinstance(f, ast.Name) and f.id == "reset_arg" and len(child.args) >= 2:
                    yield name, "reset_arg", child, child.args[1:]
            yield from walk(child, name)
    yield from walk(tree, "")


def default_dest(flags: list[str]) -> str:
    """argparse's dest for an option without one: its first long flag (two leading dashes), else its first flag,
    without the leading dashes and with '-' read as '_' (`-s, --short` is `short`)."""
    long = next((f for f in flags if len(f) > 1 and f[1] == "-"), flags[0])
    return long.lstrip("-").replace("-", "_")


def extract_file(path: Path, parser: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(options, calls whose flags are not literal strings) of one source file."""
    out, skipped = [], []
    for func, receiver, call, args in _calls(ast.parse(path.read_text(encoding="utf-8"))):
        if parser == "sglang" and receiver == "temp_parser":
            continue  # SLIME's pre-parse of the engine width, not an option of the SGLang parser
        flags = [_literal(a) for a in args]
        if not flags or not all(isinstance(f, str) and f.startswith("-") for f in flags):
            skipped.append(f"{path.name}:{call.lineno}")
            continue
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        opt: dict[str, Any] = {"flags": flags, "parser": parser, "group": func, "kind": _kind(kw),
                               "dest": _literal(kw.get("dest")) or default_dest(flags),
                               "nargs": _literal(kw.get("nargs")), "choices": _literal(kw.get("choices")),
                               "default": _literal(kw.get("default"))}
        if _literal(kw.get("required")) is True:
            opt["required"] = True
        if receiver == "reset_arg":
            opt["reset_arg"] = True  # adds the option only where Megatron lacks it
        out.append(opt)
    return out, skipped


def skip_lists(root: Path) -> dict[str, list[str]]:
    """The ServerArgs fields a framework leaves out of its --sglang-* options (list literals named *skipped*)."""
    out: dict[str, list[str]] = {}
    for path in root.rglob("sglang_utils/arguments.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                    and "skipped" in node.targets[0].id.lower() and isinstance(_literal(node.value), list):
                out[node.targets[0].id] = _literal(node.value)
    return out


def from_argparse(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """A live parser's options (components: Megatron, SGLang's ServerArgs), facts only."""
    titles = {id(a): g.title for g in parser._action_groups for a in g._group_actions}
    kinds = {"_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false", "_CountAction": "count",
             "BooleanOptionalAction": "bool_optional", "_StoreConstAction": "store_const", "_AppendAction": "append"}
    out = []
    for a in parser._actions:
        if not a.option_strings or isinstance(a, argparse._HelpAction):
            continue
        kind = kinds.get(type(a).__name__) or (getattr(a.type, "__name__", "other") if a.type else "str")
        choices = [c if isinstance(c, (int, float, str)) else str(c) for c in a.choices] if a.choices else None
        default = a.default if isinstance(a.default, (int, float, str, bool, type(None))) else None
        out.append({"flags": list(a.option_strings), "group": titles.get(id(a), ""), "kind": kind, "dest": a.dest,
                    "nargs": a.nargs if isinstance(a.nargs, (int, str)) else None, "choices": choices,
                    "default": default})
    return out


PACKAGES = {"megatron": ("megatron.training.arguments", ("add_megatron_arguments",), "megatron-core", False),
            "sglang": ("sglang.srt.server_args", ("ServerArgs", "add_cli_args"), "sglang", True)}
"""Component kind -> (the module holding its add-arguments function, that function's path in it, the distribution
the component is named after with its version, whether ServerArgs' explicit dests are recorded)."""


def _component(kind: str, load: Callable[[str], Any] = importlib.import_module,
               version: Callable[[str], str] = metadata.version) -> dict[str, Any]:
    """A component from the installed package (load and version: how its module and release are found)."""
    module, path, dist, record_dest = PACKAGES[kind]
    add = functools.reduce(getattr, path, load(module))
    return component_of(add, f"{dist}-{version(dist)}", record_dest=record_dest)


def component_of(add: Callable[[argparse.ArgumentParser], Any], name: str, record_dest: bool = False
                 ) -> dict[str, Any]:
    """The options `add` puts on a parser as the frameworks build theirs (no abbreviations, no --help); record_dest:
    mark each whose add_argument set dest itself (explicit_dest), as the frameworks skip ServerArgs options by it."""
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    if record_dest:
        wrapped = parser.add_argument

        def record(*flags: Any, **kwargs: Any) -> Any:
            action = wrapped(*flags, **kwargs)
            action.explicit_dest = "dest" in kwargs  # type: ignore[attr-defined]
            return action

        parser.add_argument = record  # type: ignore[method-assign]
    add(parser)
    options = from_argparse(parser)
    for opt, action in zip(options, [a for a in parser._actions if a.option_strings], strict=True):
        if getattr(action, "explicit_dest", False):
            opt["explicit_dest"] = True
    return {"name": name, "options": options}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rlcheck.framework.schema")
    ap.add_argument("what", choices=["tree", "megatron", "sglang"])
    ap.add_argument("root", nargs="?", type=Path)
    ap.add_argument("--sglang-file", help="the tree's file whose options SLIME parses with its separate SGLang parser")
    ap.add_argument("--exclude", action="append", default=[], help="a file under root to leave out")
    args = ap.parse_args(argv)
    if args.what != "tree":
        json.dump(_component(args.what), sys.stdout, indent=0, sort_keys=True)
        return 0
    options, skipped = [], []
    for path in sorted(args.root.rglob("*arguments.py")):
        rel = str(path.relative_to(args.root))
        if rel in args.exclude or "/tests/" in f"/{rel}":
            continue
        got, miss = extract_file(path, "sglang" if rel == args.sglang_file else "main")
        options += got
        skipped += miss
    json.dump({"options": options, "not_literal": skipped, "skip_lists": skip_lists(args.root)}, sys.stdout,
              indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
