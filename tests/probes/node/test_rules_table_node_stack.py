"""The RL stack's versions on one node (rlcheck.probes.node.node_stack) as a rule table: SLIME before Miles, a
framework without metadata said as a source checkout, none said as ''; NCCL from its wheel (newest CUDA first), else
the first nccl.h whose three defines all read; and read_stack on a built environment, found without importing it.
'' always means not read here."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from rlcheck.probes.node import node_stack


def _dist(root: Path, name: str, version: str) -> None:
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder first on sys.path: slime and miles packages (importing them fails), built distributions."""
    root = tmp_path / "site"
    root.mkdir()
    for package in ("slime", "miles", "rlk_pkg"):
        (root / package).mkdir()
        (root / package / "__init__.py").write_text("raise SystemExit('imported')\n")
    for name, version in (("sglang", "0.5.99"), ("megatron-core", "0.99.0"), ("slime", "0.9.9"),
                          ("nvidia-nccl-cu12", "2.12.0"), ("nvidia-nccl-cu13", "2.13.0")):
        _dist(root, name, version)
    monkeypatch.syspath_prepend(str(root))
    return root


def test_rules_table_node_stack_versions_and_importable(site, monkeypatch):
    assert node_stack._version("sglang") == "0.5.99" and node_stack._version("rlk-absent") == ""
    assert node_stack._importable("rlk_pkg") and "rlk_pkg" not in sys.modules  # found, not imported
    assert not node_stack._importable("rlk_absent")
    assert not node_stack._importable("rlk_absent.sub")  # its parent absent: ImportError
    monkeypatch.setitem(sys.modules, "rlk_specless", types.ModuleType("rlk_specless"))
    sys.modules["rlk_specless"].__spec__ = None
    assert not node_stack._importable("rlk_specless")  # ValueError


def test_rules_table_node_stack_read_stack_on_a_built_environment(site):
    assert node_stack.read_stack() == node_stack.StackVersions(
        sglang="0.5.99", megatron="0.99.0", framework="slime 0.9.9", nccl="2.13.0")
    assert "slime" not in sys.modules and "miles" not in sys.modules


@pytest.mark.parametrize(("importable", "versions", "framework"), [
    ({"slime", "miles"}, {"slime": "0.2.4", "miles": "0.1.0"}, "slime 0.2.4"),  # SLIME first
    ({"miles"}, {"slime": "0.2.4", "miles": "0.1.0"}, "miles 0.1.0"),  # metadata without the package: not SLIME
    ({"slime"}, {}, "slime (source checkout)"),
    ({"miles"}, {}, "miles (source checkout)"),
    (set(), {"slime": "0.2.4"}, ""),
])
def test_rules_table_node_stack_framework(importable, versions, framework):
    assert node_stack.read_framework(importable.__contains__, lambda n: versions.get(n, "")) == framework
    assert node_stack.StackVersions().framework == ""


def _header(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(("text", "version"), [
    ("#define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n#define NCCL_SUFFIX \"\"\n", "2.27.7"),
    ("/* nccl */\n#define NCCL_PATCH 3\n#define  NCCL_MINOR\t29\n#define NCCL_MAJOR 2 // major\n", "2.29.3"),
    (b"\xff\xfe\n#define NCCL_MAJOR 2\n#define NCCL_MINOR 18\n#define NCCL_PATCH 1\n", "2.18.1"),  # not UTF-8
    ("#define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n", ""),  # a part missing
    ("#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n", ""),
    ("#define NCCL_MAJOR 2\n#define NCCL_PATCH 7\n", ""),
    ("  #define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n", ""),  # not at a line's start
    ("#define NCCL_MAJOR_X 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n", ""),
    ("#define NCCL_MAJOR x\n#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n", ""),
    ("", ""),
])
def test_rules_table_node_stack_nccl_header(tmp_path, text, version):
    assert node_stack.read_nccl_header(_header(tmp_path, "nccl.h", text)) == version


def test_rules_table_node_stack_nccl_header_unreadable(tmp_path):
    assert node_stack.read_nccl_header(tmp_path / "absent.h") == ""
    assert node_stack.read_nccl_header(tmp_path) == ""  # a folder


@pytest.mark.parametrize(("wheels", "headers", "nccl"), [
    ({"nvidia-nccl-cu11": "2.11", "nvidia-nccl-cu12": "2.12", "nvidia-nccl-cu13": "2.13"}, ["good"], "2.13"),
    ({"nvidia-nccl-cu11": "2.11", "nvidia-nccl-cu12": "2.12"}, ["good"], "2.12"),
    ({"nvidia-nccl-cu11": "2.11"}, ["good"], "2.11"),
    ({"nccl": "9.9"}, ["absent", "partial", "good", "other"], "2.29.3"),  # the first header that reads
    ({}, ["other", "good"], "2.21.5"),
    ({}, ["absent", "partial"], ""),
    ({}, [], ""),
])
def test_rules_table_node_stack_nccl(tmp_path, wheels, headers, nccl):
    defines = "#define NCCL_MAJOR {}\n#define NCCL_MINOR {}\n#define NCCL_PATCH {}\n"
    made = {"good": _header(tmp_path, "good.h", defines.format(2, 29, 3)),
            "other": _header(tmp_path, "other.h", defines.format(2, 21, 5)),
            "partial": _header(tmp_path, "partial.h", "#define NCCL_MAJOR 2\n"), "absent": tmp_path / "absent.h"}
    assert node_stack.read_nccl(lambda n: wheels.get(n, ""), tuple(made[h] for h in headers)) == nccl


def test_rules_table_node_stack_where_it_looks():
    assert node_stack.NCCL_WHEELS == ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")
    assert node_stack.NCCL_HEADERS == (Path("/usr/include/nccl.h"), Path("/usr/local/include/nccl.h"))
    assert node_stack.FRAMEWORKS == ("slime", "miles")
