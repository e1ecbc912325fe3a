"""The ELF reader behind the torch_memory_saver checks as a rule table (rlcheck.probes.node.elf): the NEEDED names of a
built shared object in order, where the dynamic section ends (DT_NULL, or its size), the string table found through
the loadable segment holding its address (both ends of the segment), and every refusal with its whole message."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from rlcheck.probes.node import elf

PHOFF, PHENTSIZE = 0x48, 0x40
"""Program headers after an 8-byte gap and 8 bytes apart beyond their 56: offsets are read, not assumed."""


def build(dynamic: list[tuple[int, int]], *, strings: bytes = b"\0libcudart.so.12\0libc.so.6\0",
          load: tuple[int, int, int] | None = None, segments: list[tuple[int, int, int, int]] | None = None,
          ident: bytes = b"\x7fELF\x02\x01", dynamic_size: int | None = None) -> bytes:
    """An ELF64 object: program headers at PHOFF, the string table at file offset 0x400 mapped at vaddr 0x10400 by a
    PT_LOAD (offset 0x400, vaddr 0x10400, size len(strings)) unless load or segments say otherwise, the dynamic
    entries at 0x200 (PT_DYNAMIC of dynamic_size, default all of them)."""
    data = bytearray(0x400 + len(strings) + 0x40)
    data[:len(ident)] = ident
    size = 16 * len(dynamic) if dynamic_size is None else dynamic_size
    load = load or (0x400, 0x10400, len(strings))
    headers = segments if segments is not None else [(elf.PT_LOAD, *load), (elf.PT_DYNAMIC, 0x200, 0x20200, size)]
    struct.pack_into("<Q", data, 0x20, PHOFF)
    struct.pack_into("<HH", data, 0x36, PHENTSIZE, len(headers))
    for i, (p_type, offset, vaddr, filesz) in enumerate(headers):
        struct.pack_into("<IIQQQQQQ", data, PHOFF + i * PHENTSIZE, p_type, 4, offset, vaddr, vaddr, filesz, filesz, 8)
    for i, (tag, value) in enumerate(dynamic):
        struct.pack_into("<qQ", data, 0x200 + 16 * i, tag, value)
    data[0x400:0x400 + len(strings)] = strings
    return bytes(data)


CUDART, LIBC = 1, 17  # offsets of the two names in the default string table
STRTAB = (elf.DT_STRTAB, 0x10400)


def _needed(tmp_path: Path, data: bytes) -> list[str]:
    path = tmp_path / "lib.so"
    path.write_bytes(data)
    return elf.needed(path)


@pytest.mark.parametrize(("dynamic", "dynamic_size", "names"), [
    ([(elf.DT_NEEDED, CUDART), (elf.DT_NEEDED, LIBC), STRTAB, (elf.DT_NULL, 0)], None,
     ["libcudart.so.12", "libc.so.6"]),
    ([STRTAB, (elf.DT_NEEDED, LIBC), (elf.DT_NEEDED, CUDART), (elf.DT_NULL, 0)], None,
     ["libc.so.6", "libcudart.so.12"]),  # in the order named, the string table before or after them
    ([(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NULL, 0), (elf.DT_NEEDED, LIBC)], None, ["libcudart.so.12"]),
    ([(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NEEDED, LIBC)], 32, ["libcudart.so.12"]),  # the section's size ends it
    ([(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NEEDED, LIBC)], 48, ["libcudart.so.12", "libc.so.6"]),
    ([STRTAB, (elf.DT_NULL, 0)], None, []),
    # other tags (DT_SONAME 14, DT_RPATH 15, a negative OS-specific tag) name nothing needed
    ([(14, CUDART), (15, LIBC), (-0x70000000, 0), STRTAB, (elf.DT_NEEDED, LIBC), (elf.DT_NULL, 0)], None,
     ["libc.so.6"]),
    ([(elf.DT_NEEDED, 0), STRTAB, (elf.DT_NULL, 0)], None, [""]),  # offset 0: the empty name
])
def test_rules_table_elf_needed_in_order(tmp_path, dynamic, dynamic_size, names):
    assert _needed(tmp_path, build(dynamic, dynamic_size=dynamic_size)) == names


@pytest.mark.parametrize(("load", "found"), [
    ((0x400, 0x10400, 0x20), True),  # the address is the segment's first byte
    ((0x3f0, 0x103f0, 0x11), True),  # its last byte
    ((0x3f0, 0x103f0, 0x10), False),  # one past its end
    ((0x400, 0x10401, 0x20), False),  # one before its start
    ((0x0, 0x10000, 0x800), True),  # the file offset is the segment's plus the distance into it
])
def test_rules_table_elf_string_table_through_its_loadable_segment(tmp_path, load, found):
    data = build([(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NULL, 0)], load=load)
    if found:
        assert _needed(tmp_path, data) == ["libcudart.so.12"]
    else:
        with pytest.raises(elf.ElfError) as err:
            _needed(tmp_path, data)
        assert str(err.value) == f"{tmp_path / 'lib.so'}: address 0x10400 is in no loadable segment"


def test_rules_table_elf_only_a_loadable_segment_maps_an_address(tmp_path):
    dynamic = [(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NULL, 0)]
    note = (4, 0x0, 0x10400, 0x100)  # PT_NOTE over the address, pointing elsewhere in the file
    segments = [note, (elf.PT_DYNAMIC, 0x200, 0x20200, 48)]
    with pytest.raises(elf.ElfError, match="address 0x10400 is in no loadable segment$"):
        _needed(tmp_path, build(dynamic, segments=segments))
    later = [note, (elf.PT_DYNAMIC, 0x200, 0x20200, 48), (elf.PT_LOAD, 0x400, 0x10400, 0x20)]
    assert _needed(tmp_path, build(dynamic, segments=later)) == ["libcudart.so.12"]


def test_rules_table_elf_first_dynamic_segment_is_read(tmp_path):
    data = bytearray(build([(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NULL, 0)], segments=[
        (elf.PT_LOAD, 0x400, 0x10400, 0x20), (elf.PT_DYNAMIC, 0x200, 0x20200, 48), (elf.PT_DYNAMIC, 0x300, 0, 48)]))
    struct.pack_into("<qQqQ", data, 0x300, elf.DT_NEEDED, LIBC, *STRTAB)
    path = tmp_path / "lib.so"
    path.write_bytes(bytes(data))
    assert elf.needed(path) == ["libcudart.so.12"]


def test_rules_table_elf_no_dynamic_segment_needs_nothing(tmp_path):
    assert _needed(tmp_path, build([], segments=[(elf.PT_LOAD, 0x400, 0x10400, 0x20)])) == []
    assert _needed(tmp_path, build([], segments=[])) == []


def test_rules_table_elf_dynamic_section_without_a_string_table_is_refused(tmp_path):
    with pytest.raises(elf.ElfError) as err:
        _needed(tmp_path, build([(elf.DT_NEEDED, CUDART), (elf.DT_NULL, 0), STRTAB]))
    assert str(err.value) == f"{tmp_path / 'lib.so'}: dynamic section without a string table"


@pytest.mark.parametrize("ident", [
    b"\x7fELG\x02\x01", b"MZ\x90\x00\x02\x01", b"\x7fELF\x01\x01",  # 32-bit
    b"\x7fELF\x02\x02",  # big-endian
    b"\x7fELF\x03\x01", b"\x7fELF\x02\x00",
])
def test_rules_table_elf_not_a_64_bit_little_endian_elf_is_refused(tmp_path, ident):
    with pytest.raises(elf.ElfError) as err:
        _needed(tmp_path, build([STRTAB, (elf.DT_NULL, 0)], ident=ident))
    assert str(err.value) == f"{tmp_path / 'lib.so'}: not a 64-bit little-endian ELF file"
    assert isinstance(err.value, ValueError)


def test_rules_table_elf_addresses_and_offsets_are_unsigned(tmp_path):
    """A segment mapped in the top half of the address space (vaddr >= 2**63) is found like any other."""
    high = 0xFFFF_FFFF_8000_0000
    data = build([(elf.DT_NEEDED, LIBC), (elf.DT_STRTAB, high + 0x400), (elf.DT_NULL, 0)], load=(0, high, 0x800))
    assert _needed(tmp_path, data) == ["libc.so.6"]


def _phoff(data: bytes, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<Q", out, 0x20, value)
    return bytes(out)


def _phnum(data: bytes, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<H", out, 0x38, value)
    return bytes(out)


GOOD = build([(elf.DT_NEEDED, CUDART), STRTAB, (elf.DT_NULL, 0)])


@pytest.mark.parametrize(("data", "cause"), [
    (b"\x7fELF", IndexError),  # cut short inside the identification
    (GOOD[:0x40], struct.error),  # cut short before its program headers
    (GOOD[:0x210], struct.error),  # cut short inside the dynamic section
    (_phoff(GOOD, 2**64 - len(GOOD) + PHOFF), OverflowError),  # headers past the end (not counted from it)
    (_phnum(GOOD, 0x8000), struct.error),  # more headers than the file holds
    (build([(elf.DT_NEEDED, 0x100), STRTAB, (elf.DT_NULL, 0)]), ValueError),  # a name with no NUL after it
    (build([(elf.DT_NEEDED, 1), STRTAB, (elf.DT_NULL, 0)], strings=b"\0lib\xff.so\0"), UnicodeDecodeError),
    (build([], segments=[(elf.PT_DYNAMIC, 0x450, 0, 0x40)]), struct.error),  # its dynamic section runs off the end
])
def test_rules_table_elf_damaged_file_is_an_elf_error_naming_it(tmp_path, data, cause):
    with pytest.raises(elf.ElfError) as err:
        _needed(tmp_path, data)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'lib.so'}: damaged ELF file (") and message.endswith(")")
    assert message == f"{tmp_path / 'lib.so'}: damaged ELF file ({err.value.__cause__})"
    assert type(err.value.__cause__) is cause


def test_rules_table_elf_reads_a_real_shared_object():
    libs = sorted(Path(sys.base_prefix, "lib").glob("libpython3*.so.1.0")) + sorted(
        Path("/lib/x86_64-linux-gnu").glob("libm.so.6"))
    if not libs:
        pytest.skip("no libpython or libm to read here")
    assert "libc.so.6" in elf.needed(libs[0])
