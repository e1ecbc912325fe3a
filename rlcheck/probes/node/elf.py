"""Read the DT_NEEDED entries of an ELF shared object (what `readelf -d` shows), in pure Python.

Training images do not always have binutils; the torch_memory_saver checks need only this.
"""

from __future__ import annotations

import struct
from pathlib import Path

DT_NULL, DT_NEEDED, DT_STRTAB = 0, 1, 5
PT_LOAD, PT_DYNAMIC = 1, 2


class ElfError(ValueError):
    """Not a 64-bit little-endian ELF file, or a damaged one; the message names the file. Callers catch this (and
    OSError) only, so nothing else may escape needed()."""


def _header(data: bytes, path: Path) -> tuple[int, int, int]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError(f"{path}: not a 64-bit little-endian ELF file")
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    return e_phoff, e_phentsize, e_phnum


def _segments(data: bytes, path: Path) -> list[tuple[int, int, int, int]]:
    """(type, file offset, virtual address, file size) of each program header."""
    phoff, size, count = _header(data, path)
    out = []
    for i in range(count):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * size)
        out.append((p_type, p_offset, p_vaddr, p_filesz))
    return out


def _to_offset(vaddr: int, segments: list[tuple[int, int, int, int]], path: Path) -> int:
    for p_type, offset, start, size in segments:
        if p_type == PT_LOAD and start <= vaddr < start + size:
            return offset + vaddr - start
    raise ElfError(f"{path}: address {vaddr:#x} is in no loadable segment")


def needed(path: Path) -> list[str]:
    """The shared libraries the object names as NEEDED, in order. A damaged file (cut short, an offset past its end
    or past any file's, a name without its NUL or not UTF-8) is an ElfError naming it, as a file of another kind is."""
    data = path.read_bytes()
    try:
        return _needed(data, path)
    except ElfError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise ElfError(f"{path}: damaged ELF file ({exc})") from exc


def _needed(data: bytes, path: Path) -> list[str]:
    segments = _segments(data, path)
    dynamic = next(((off, size) for t, off, _, size in segments if t == PT_DYNAMIC), None)
    if dynamic is None:
        return []
    entries, strtab = [], None
    for pos in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, value = struct.unpack_from("<qQ", data, pos)
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            entries.append(value)
        elif tag == DT_STRTAB:
            strtab = _to_offset(value, segments, path)
    if strtab is None:
        raise ElfError(f"{path}: dynamic section without a string table")
    return [data[strtab + e: data.index(b"\0", strtab + e)].decode() for e in entries]
