"""SLIME's / Miles' weight-sync process group against the installed torch (catalogue: torch-pg-options-renamed).

torch renamed `_new_process_group_helper(pg_options=...)` to `backend_options` in 2.6. The frameworks' own
`init_process_group` picks the name from the torch version; compared as strings ("2.10" < "2.6") it picks the
wrong one from torch 2.10 on. The source is read with `ast`, never imported (it imports torch.distributed).
"""

from __future__ import annotations

import ast
import dataclasses

from packaging.version import InvalidVersion, Version

from rlcheck import catalog
from rlcheck.probes.node.packages import package_root
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "torch-pg-options-renamed"
SOURCES = {"slime": "slime/utils/distributed_utils.py", "miles": "miles/utils/distributed_utils.py"}
RENAMED_IN = "2.6"


def _is_str_of_version(node: ast.expr) -> bool:
    """`str(<anything>.__version__)`: a version turned into a plain string (torch's own compares as a version)."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "__version__")


def compares_version_as_string(source: str) -> bool:
    """The source compares `str(x.__version__)` with a string literal (an ordering of characters, not versions)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            sides = [node.left, *node.comparators]
            if any(_is_str_of_version(s) for s in sides) and \
                    any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides):
                return True
    return False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PgObservation:
    source: str | None
    """The installed framework's distributed_utils.py, None when neither SLIME nor Miles is installed."""
    string_compare: bool
    """The file picks the keyword by comparing the torch version as a string."""
    torch: str | None
    """Installed torch version, None when torch is not installed."""


def collect_pg() -> PgObservation:
    torch = catalog.installed_versions(("torch",))["torch"]
    for rel in SOURCES.values():
        root = package_root(rel.split("/", 1)[0])
        if root and (root / rel).exists():
            text = (root / rel).read_text(encoding="utf-8")
            return PgObservation(source=str(root / rel), string_compare=compares_version_as_string(text), torch=torch)
    return PgObservation(source=None, string_compare=False, torch=torch)


def keyword_choices(torch: str) -> tuple[str, str]:
    """(keyword torch wants, keyword a string comparison picks) for this torch version."""
    wanted = "backend_options" if Version(torch).release >= Version(RENAMED_IN).release else "pg_options"
    picked = "backend_options" if torch >= RENAMED_IN else "pg_options"
    return wanted, picked


def evaluate_pg(obs: PgObservation) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if obs.source is None:
        return Verdict(**base, status=Status.SKIP, summary="needs SLIME or Miles installed: found neither")
    if not obs.string_compare:
        return Verdict(**base, status=Status.PASS, summary=f"{obs.source} does not compare the torch version as a "
                                                           "string")
    if obs.torch is None:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{obs.source} compares the torch version as a string "
                                                              "and torch is not installed to tell which name it picks")
    try:
        wanted, picked = keyword_choices(obs.torch)
    except InvalidVersion:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"torch version {obs.torch!r} is not a PEP 440 version")
    remedy = catalog.get(FAILURE_ID).remedy
    if wanted != picked:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{obs.source} compares the torch version as a string: with torch {obs.torch} it "
                               f"passes {picked} where torch wants {wanted}; the weight-update group dies")
    return Verdict(**base, status=Status.WARN, remedy=remedy,
                   summary=f"{obs.source} compares the torch version as a string: right for torch {obs.torch}, "
                           "wrong from torch 2.10 (an image upgrade breaks the weight update)")
