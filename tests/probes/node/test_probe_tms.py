"""torch_memory_saver probe pieces: SLIME's selection rules, the ELF NEEDED reader, the loader-path search."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rlcheck.probes.node import elf, tms

STEM = tms.STEM


@pytest.mark.parametrize(("files", "rule", "expected"), [
    ([f"{STEM}.abi3.so", f"{STEM}_cu12.abi3.so", f"{STEM}_cu13.abi3.so"], "slime-v0.2.4", f"{STEM}.abi3.so"),
    ([f"{STEM}.abi3.so", f"{STEM}_cu12.abi3.so", f"{STEM}_cu13.abi3.so"], "slime-main", f"{STEM}_cu13.abi3.so"),
    ([f"{STEM}.abi3.so", f"{STEM}_cu12.abi3.so"], "slime-main", f"{STEM}_cu12.abi3.so"),
    ([f"{STEM}_cu13.abi3.so"], "slime-v0.2.4", None),
])
def test_probe_tms_selection_rules(tmp_path, files, rule, expected):
    for name in files:
        (tmp_path / name).write_bytes(b"")
    chosen = tms.choose(rule, tmp_path)
    assert (chosen.name if chosen else None) == expected


@pytest.mark.parametrize(("framework", "version", "rule"), [
    ("slime", "0.2.4", "slime-v0.2.4"), ("slime", "0.2.0.post1", "slime-v0.2.4"), ("slime", "0.3.0", "slime-v0.3.1"),
    ("slime", "0.3.1", "slime-v0.3.1"), ("slime", "0.3.1.post1", "slime-v0.3.1"), ("slime", "0.3.2", "slime-main"),
    ("slime", None, "slime-main"), ("slime", "main", "slime-main"), ("miles", "0.1.0", tms.PACKAGE_RULE),
    ("miles", None, tms.PACKAGE_RULE), (None, None, "slime-v0.2.4"),
])
def test_probe_tms_rule_for_framework_version(framework, version, rule):
    assert tms.rule_for(framework, version) == rule


@pytest.mark.parametrize(("rule", "suffix", "major"), [
    ("slime-v0.2.4", "", 12), ("slime-v0.3.1", "_cu12", 12), ("slime-main", "_cu13", 13)])
def test_probe_tms_each_rule_on_the_real_0_0_10_wheel(rule, suffix, major):
    """What the tms_*_on_cuda12 node recordings say each rule picks is what it picks from the real wheel's files."""
    chosen = tms.choose(rule, tms.package_dir())
    assert chosen is not None and chosen.name == f"{STEM}{suffix}.abi3.so" and tms.cudart_major(chosen) == major


def test_elf_needed_of_the_real_wheel_files():
    folder = tms.package_dir()
    assert folder is not None
    assert tms.cudart_major(folder / f"{STEM}.abi3.so") == 12
    assert tms.cudart_major(folder / f"{STEM}_cu13.abi3.so") == 13
    assert elf.needed(folder / f"{STEM}_cu13.abi3.so")[:2] == ["libcuda.so.1", "libcudart.so.13"]


def test_elf_refuses_a_non_elf_file_naming_it(tmp_path):
    bad = tmp_path / "notes.so"
    bad.write_text("not a library")
    with pytest.raises(elf.ElfError, match="notes.so: not a 64-bit little-endian ELF file"):
        elf.needed(bad)


def test_elf_python_binary_has_dynamic_section():
    assert isinstance(elf.needed(Path(sys.executable).resolve()), list)


def test_loader_path_search_order(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "libcudart.so.13").write_bytes(b"")
    assert tms.find_on_loader_path("libcudart.so.13", f"{first}:{second}", set()) == str(first / "libcudart.so.13")
    assert tms.find_on_loader_path("libcudart.so.13", "", {str(second)}) == str(second / "libcudart.so.13")
    assert tms.find_on_loader_path("libnothing.so.99", str(first), set()) is None
