"""Which architectures SGLang, mbridge and SLIME's / Miles' converters know: read from their sources with `ast`.

The committed lists (rlcheck/data/model_support.toml) were read this way from the upstream sources named in the
file; the check prefers the lists of the packages installed where it runs, and
tests/probes/recipe/test_probe_architecture.py keeps the file in agreement with whatever upstream source is at hand.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

SUPPORT_FILE = Path(__file__).resolve().parents[2] / "data" / "model_support.toml"
KINDS = ("sglang", "mbridge", "slime_hf_to_megatron", "slime_megatron_to_hf", "miles_megatron_to_hf")


@dataclass(frozen=True, kw_only=True, slots=True)
class KnownList:
    """One registry's names and where they were read."""

    kind: str
    """One of KINDS."""
    names: frozenset[str]
    """Architectures (sglang), model types (mbridge, slime_hf_to_megatron) or name fragments the converter looks
    for in the lower-cased config class name (…_megatron_to_hf)."""
    source: str
    """Repository or package, version or commit, file and function the names came from."""


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8-sig"))


def _original_names(tree: ast.Module) -> dict[str, str]:
    """Module-level alias -> the class __name__ it stands for (imports `as`, `X = Y`)."""
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Name):  # EntryClass too: a later `EntryClass = [EntryClass, B]` adds B
                    names[target.id] = names.get(node.value.id, node.value.id)
    return names


def sglang_architectures(models_dir: Path) -> frozenset[str]:
    """What SGLang's ModelRegistry registers: the __name__ of each EntryClass of the models package's modules
    (python/sglang/srt/models/registry.py import_model_classes; sub-packages are not scanned)."""
    found: set[str] = set()
    for path in sorted(models_dir.glob("*.py")):
        tree = _parse(path)
        aliases = _original_names(tree)
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass"
                                                    for t in node.targets):
                value = node.value
                for item in value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]:
                    name = item.id if isinstance(item, ast.Name) else getattr(item, "attr", None)
                    if name:
                        found.add(aliases.get(name, name))
    return frozenset(found)


def mbridge_model_types(models_dir: Path) -> frozenset[str]:
    """The model types mbridge's @register_model("…") / register_model([...]) decorators register."""
    found: set[str] = set()
    for path in sorted(models_dir.rglob("*.py")):
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == \
                    "register_model" and node.args:
                arg = node.args[0]
                items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
                found |= {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}
    return frozenset(found)


def dict_keys(source: str, name: str) -> frozenset[str]:
    """The string keys of the module-level dict literal `name = {...}` (SLIME's hf_to_megatron _LOADERS)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                and isinstance(node.value, ast.Dict):
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            return frozenset(k for k in keys if isinstance(k, str))
    return frozenset()


def converter_fragments(source: str, function: str = "_convert_to_hf_core") -> frozenset[str]:
    """The strings `function` looks for in `model_name`: `"…" in model_name`, and the tuple of
    `any(family in model_name for family in (...))`."""
    def on_model_name(node: ast.AST) -> bool:
        return isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) and \
            isinstance(node.comparators[0], ast.Name) and node.comparators[0].id == "model_name"

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            found: set[str] = set()
            for sub in ast.walk(node):
                if on_model_name(sub) and isinstance(sub, ast.Compare) and isinstance(sub.left, ast.Constant):
                    found.add(str(sub.left.value))
                elif isinstance(sub, ast.GeneratorExp) and on_model_name(sub.elt):
                    found |= {str(e.value) for gen in sub.generators if isinstance(gen.iter, ast.Tuple)
                              for e in gen.iter.elts if isinstance(e, ast.Constant)}
            return frozenset(found)
    return frozenset()


def load(path: Path = SUPPORT_FILE) -> dict[str, KnownList]:
    """The committed lists; a table without names or source, or an unknown table, raises ValueError."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    if set(raw) - set(KINDS):
        raise ValueError(f"{path.name}: unknown tables {sorted(set(raw) - set(KINDS))}: only {', '.join(KINDS)}")
    out = {}
    for kind, table in raw.items():
        names, source = table.get("names"), table.get("source")
        if not isinstance(source, str) or not source or not isinstance(names, list) or not names \
                or not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"{path.name}: [{kind}] needs a non-empty source and a non-empty list of names")
        out[kind] = KnownList(kind=kind, names=frozenset(names), source=source)
    return out
