"""The package tree reads as the architecture: imports run one way (no circles, nothing imports a floor above it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Floors, lowest first: a module may import its own floor and the floors below it, never one above.
FLOORS = (
    ("rlcheck.verdict", "rlcheck.hardware", "rlcheck.catalog", "rlcheck.scan", "rlcheck.scan_engines",
     "rlcheck.scan_input", "rlcheck.scan_output", "rlcheck.data_types", "rlcheck.facts", "rlcheck.secret_guard",
     "rlcheck.process", "rlcheck.fixes", "rlcheck.option_table",
     # what is kept per image (reproducer verdicts, facts read from packages): a probe reads its facts through it
     "rlcheck.repro.cache", "rlcheck.repro.sidecar", "rlcheck.repro.image_facts"),
    ("rlcheck.cluster", "rlcheck.recipes", "rlcheck.report", "rlcheck.report_nodes", "rlcheck.field_corpus",
     "rlcheck.history", "rlcheck.history_band"),
    ("rlcheck.probes", "rlcheck.reward", "rlcheck.fixes.tms_preload", "rlcheck.framework"),
    ("rlcheck.preflight", "rlcheck.deploy", "rlcheck.repro", "rlcheck.job"),
    ("rlcheck.e2e",),
    ("rlcheck.plugin", "rlcheck.checks"),
    ("rlcheck.cli", "rlcheck.cli_run", "rlcheck.cli_k8s", "rlcheck.cli_baseline", "rlcheck.exec_argv"),
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package: str) -> set[str]:
    """Every module this file imports, at any depth (function-level imports count too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module if node.level == 0 else ".".join(package.split(".")[:-node.level + 1 or None] +
                                                                [node.module])
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def _graph(top: str) -> dict[str, set[str]]:
    files = {_module_name(p): p for p in (ROOT / top).rglob("*.py")}
    return {name: {m for m in _imports(path, name) if m in files and m != name} for name, path in files.items()}


def _floor(module: str) -> int:
    """The floor of the longest name in FLOORS that is this module or a package above it."""
    found = [(len(f), i) for i, floor in enumerate(FLOORS) for f in floor if module == f or module.startswith(f + ".")]
    if not found:
        raise AssertionError(f"{module} is on no floor of tests/test_architecture.py: place it")
    return max(found)[1]


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


@pytest.mark.parametrize("top", ["rlcheck", "kernels"])
def test_architecture_no_import_circle(top):
    assert _cycle(_graph(top)) == []


def test_architecture_no_module_imports_a_floor_above_it():
    graph = _graph("rlcheck")
    upward = [f"{m} -> {d}" for m, deps in graph.items() if m != "rlcheck" for d in deps
              if d != "rlcheck" and _floor(d) > _floor(m)]
    assert upward == []


def test_architecture_detects_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def _folder(module: str) -> str:
    """The folder a module lives in: rlcheck's top-level sub-package, or a probes wing ('probes.node');
    '' for modules of rlcheck itself."""
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "probes":
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 2 else ""


def folder_pairs(graph: dict[str, set[str]]) -> list[str]:
    """Folders that import each other (each direction's first import named)."""
    edges: dict[tuple[str, str], str] = {}
    for m, deps in graph.items():
        for d in deps:
            a, b = _folder(m), _folder(d)
            if a and b and a != b:
                edges.setdefault((a, b), f"{m} -> {d}")
    return sorted(f"{edges[(a, b)]} and {edges[(b, a)]}" for a, b in edges if (b, a) in edges and a < b)


def test_architecture_no_two_folders_import_each_other():
    """A folder is a wing: job/ never reaches back into preflight/, fixes/ never into probes/ and back."""
    assert folder_pairs(_graph("rlcheck")) == []


def test_architecture_detects_two_folders_importing_each_other():
    graph = {"rlcheck.job.a": {"rlcheck.preflight.b"}, "rlcheck.preflight.b": {"rlcheck.job.c"},
             "rlcheck.job.c": set(), "rlcheck.cli": {"rlcheck.job.a"}}
    assert folder_pairs(graph) == ["rlcheck.job.a -> rlcheck.preflight.b and rlcheck.preflight.b -> rlcheck.job.c"]


def test_architecture_driver_guard_file_name_is_one():
    """probes/ names the guard's .pth file without importing fixes/: the two literals must stay one."""
    from rlcheck.fixes import driver_guard
    from rlcheck.probes.image import slime_source

    assert slime_source.PTH_NAME == driver_guard.PTH_NAME


WINGS = ("node", "gpu", "image", "recipe", "cluster")
# What runs inside the per-node fan-out task may import, besides the standard library and node/ itself.
NODE_MAY_IMPORT = ("rlcheck.process", "rlcheck.data_types", "rlcheck.hardware")


def _wing(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "probes" else ""


def wing_breaches(graph: dict[str, set[str]]) -> list[str]:
    """A wing imports node/ and the floors below probes, never another wing."""
    return sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps
                  if _wing(m) and _wing(d) and _wing(d) not in (_wing(m), "node"))


def node_breaches(root: Path) -> list[str]:
    """node/ runs on every node of the cluster: at module level it imports only the standard library, and at any depth
    only these rlcheck modules (a third-party import inside a function is a child process's business, e.g. pynvml)."""
    import sys

    out = []
    for path in sorted((root / "rlcheck" / "probes" / "node").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
            for name in names:
                if name.startswith("rlcheck."):
                    ok = name.startswith(("rlcheck.probes.node",) + NODE_MAY_IMPORT)
                else:
                    ok = id(node) not in top or name.split(".")[0] in sys.stdlib_module_names or name == "__future__"
                if not ok:
                    out.append(f"{path.name}: {name}")
    return out


def test_architecture_probes_live_in_wings():
    loose = [p.name for p in (ROOT / "rlcheck" / "probes").glob("*.py") if p.name != "__init__.py"]
    assert loose == []
    assert sorted(p.name for p in (ROOT / "rlcheck" / "probes").iterdir() if (p / "__init__.py").is_file()) == \
        sorted(WINGS)


def test_architecture_no_wing_imports_another_but_node():
    assert wing_breaches(_graph("rlcheck")) == []


def test_architecture_detects_a_wing_importing_another():
    graph = {"rlcheck.probes.recipe.a": {"rlcheck.probes.image.b", "rlcheck.probes.node.c", "rlcheck.verdict"},
             "rlcheck.probes.gpu.d": {"rlcheck.probes.gpu.e", "rlcheck.probes.cluster.f"},
             "rlcheck.preflight.g": {"rlcheck.probes.recipe.a"}}
    assert wing_breaches(graph) == ["rlcheck.probes.gpu.d -> rlcheck.probes.cluster.f",
                                    "rlcheck.probes.recipe.a -> rlcheck.probes.image.b"]


def test_architecture_node_wing_imports_only_what_every_node_has():
    assert node_breaches(ROOT) == []


def test_architecture_detects_a_node_module_importing_beyond_the_standard_library(tmp_path):
    node = tmp_path / "rlcheck" / "probes" / "node"
    node.mkdir(parents=True)
    (node / "ok.py").write_text("import os\nfrom rlcheck.process import subproc\nfrom rlcheck.probes.node import gpus\n"
                                "def f():\n    import pynvml\n", encoding="utf-8")
    (node / "bad.py").write_text("import numpy\nfrom rlcheck.verdict import Verdict\n"
                                 "def f():\n    from rlcheck.probes.recipe import memory\n", encoding="utf-8")
    assert node_breaches(tmp_path) == ["bad.py: numpy", "bad.py: rlcheck.verdict", "bad.py: rlcheck.probes.recipe"]


def _wing_uses(path: Path) -> dict[str, int]:
    """How often a test file names what it imported from each probes wing (at any depth)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.update((a.asname or a.name, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update((a.asname, a.name) for a in node.names if a.asname)
    uses: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (wing := _wing(imported.get(node.id, ""))):
            uses[wing] = uses.get(wing, 0) + 1
    return uses


def _names_a_probe(stem: str, topics: set[str]) -> bool:
    """test_probe_<topic>, or test_rules_table_<topic> / test_rules_<topic> whose topic starts with a probe module's
    or a wing's name (test_rules_table_memory_params: memory_params; test_rules_table_gating: not a probe)."""
    if stem.startswith("test_probe_"):
        return True
    for prefix in ("test_rules_table_", "test_rules_"):
        if stem.startswith(prefix):
            topic = stem.removeprefix(prefix)
            return any(topic == t or topic.startswith(t + "_") for t in topics)
    return False


def misplaced_wing_tests(root: Path) -> list[str]:
    """A test of a probe wing lives in tests/probes/<wing>/, and what lives there tests that wing most. A test of a
    wing: one named for a probe (test_probe_*, test_rules_table_<probe module>*); its wing: the one whose names it
    uses most."""
    probes = root / "rlcheck" / "probes"
    topics = {p.stem for p in probes.glob("*/*.py") if p.stem != "__init__"} | {p.name for p in probes.iterdir()}
    out = []
    for path in sorted((root / "tests").rglob("test_*.py")):
        rel = path.relative_to(root / "tests")
        uses = _wing_uses(path)
        most = sorted(w for w, n in uses.items() if n == max(uses.values()))
        if rel.parts[0] == "probes":
            folder = rel.parts[1] if len(rel.parts) == 3 else ""
            if folder not in WINGS or folder not in most:
                out.append(f"{rel.as_posix()}: tests the {'/'.join(most) or 'no'} wing")
        elif _names_a_probe(path.stem, topics) and most:  # named like a wing, but using none: not a wing's test
            out.append(f"{rel.as_posix()}: tests the {'/'.join(most) or 'no'} wing: move it to tests/probes/"
                       f"{most[0] if most else '<wing>'}/")
    return out


def test_architecture_tests_of_a_wing_live_in_its_folder():
    assert misplaced_wing_tests(ROOT) == []
    assert sorted(p.name for p in (ROOT / "tests" / "probes").iterdir() if p.is_dir() and p.name != "__pycache__") \
        == sorted(WINGS)


def test_architecture_detects_a_wing_test_out_of_its_folder(tmp_path):
    for wing, module in (("recipe", "memory"), ("node", "gpus"), ("image", "image")):
        (tmp_path / "rlcheck" / "probes" / wing).mkdir(parents=True)
        (tmp_path / "rlcheck" / "probes" / wing / f"{module}.py").write_text("", encoding="utf-8")
    memory = "from rlcheck.probes.recipe import memory\nfrom rlcheck.probes.node.gpus import GpuInfo\n" \
             "def test_x():\n    memory.a(memory.b, GpuInfo)\n"
    files = {"test_probe_memory.py": memory,  # named for a probe, not in a wing's folder
             "test_rules_table_memory_params.py": memory,
             "test_rules_table_gating.py": memory,  # not named for a probe: stays
             "test_rules_table_recipe_cases.py": "def test_x():\n    pass\n",  # named like a wing, uses none
             "test_hardware.py": memory,
             "probes/recipe/test_probe_memory_kv.py": memory,
             "probes/node/test_rules_table_memory.py": memory,  # uses recipe/ most
             "probes/image/test_probe_image.py": "def test_x():\n    pass\n",  # uses no wing
             "probes/test_probe_loose.py": memory}  # in no wing's folder
    for name, text in files.items():
        (tmp_path / "tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / name).write_text(text, encoding="utf-8")
    assert misplaced_wing_tests(tmp_path) == [
        "probes/image/test_probe_image.py: tests the no wing",
        "probes/node/test_rules_table_memory.py: tests the recipe wing",
        "probes/test_probe_loose.py: tests the recipe wing",
        "test_probe_memory.py: tests the recipe wing: move it to tests/probes/recipe/",
        "test_rules_table_memory_params.py: tests the recipe wing: move it to tests/probes/recipe/"]
