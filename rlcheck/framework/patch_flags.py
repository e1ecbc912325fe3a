"""The Megatron options a framework's image adds by patch (SLIME's docker/patch/latest/megatron*.patch), as a schema
component: the facts only (flag names and kinds), never the patch.

SLIME builds its image by applying its own patch to Megatron-LM. The patch adds options two ways: an
`add_argument('--x', ...)` line, and a field of Megatron's TransformerConfig dataclass, which Megatron's argument
parser exposes as `--field-name` (SLIME's own scripts pass `--post-self-attn-layernorm` where only the field is
added). A launch using them is judged by the schema of that image, not by Megatron's release alone.

Build (from a fetched SLIME tree; the output is committed under rlcheck/data/frameworks/components/):
    python -m rlcheck.framework.patch_flags PATCH ... --name slime-megatron-patch-v0.2.4 --source "THUDM/slime@..."
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
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
            kind = _field_kind(m.group(2))
            flag = f"--{m.group(1).replace('_', '-')}" if kind else None
        if flag and kind and flag not in options:
            options[flag] = {"flags": [flag], "group": f"patch: {path}", "kind": kind,
                             "dest": flag[2:].replace("-", "_"), "nargs": None, "choices": None,
                             "default": False if kind == "store_true" else None}
    return list(options.values())


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
