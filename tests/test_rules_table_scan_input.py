"""Rule table for what `rlcheck scan` reads (rlcheck.scan_input): the format told from each magic number and its near
misses, every format read back whole however the stream hands out its bytes, zstd without its module named as
unreadable, and the walk of a tree (sorted, nested, loops cut, every entry that cannot be read named with why)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import sys

import pytest

from rlcheck import scan_input
from rlcheck.scan_input import Entry, Unreadable

BZ2_BLOCK = b"\x31\x41\x59\x26\x53\x59"
BZ2_END = b"\x17\x72\x45\x38\x50\x90"
TEXT = b"line one\nKeyError: 'x'\n" * 50


@pytest.mark.parametrize(("head", "fmt"), [
    (b"\x1f\x8b\x08\x00", "gzip"), (b"\x1f\x8b\x08", "gzip"), (b"\x1f\x8b\x07\x00", "plain"), (b"\x1f\x8b", "plain"),
    (b"\x1e\x8b\x08", "plain"), (b"\x1f\x8c\x08", "plain"),
    (b"BZh9" + BZ2_BLOCK, "bz2"), (b"BZh1" + BZ2_END, "bz2"), (b"BZh5" + BZ2_BLOCK, "bz2"),
    (b"BZh0" + BZ2_BLOCK, "plain"), (b"BZhx" + BZ2_BLOCK, "plain"), (b"BZh9" + BZ2_BLOCK[:5] + b"\x00", "plain"),
    (b"BZh9rest of a log", "plain"), (b"BZh9", "plain"), (b"BZh", "plain"), (b"BZi9" + BZ2_BLOCK, "plain"),
    (b"bZh9" + BZ2_BLOCK, "plain"), (b"BYh9" + BZ2_BLOCK, "plain"),
    (b"\xfd7zXZ\x00\x00\x04", "xz"), (b"\xfd7zXZ\x00", "xz"), (b"\xfd7zXZ\x01", "plain"), (b"\xfd7zXY\x00", "plain"),
    (b"\x28\xb5\x2f\xfd\x24", "zstd"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"\x28\xb5\x2f\xfe", "plain"),
    (b"\x28\xb5\x2f", "plain"), (b"", "plain"), (b"2026-12-03 INFO", "plain"),
    # a longer head (a caller's own read) is judged on its first bytes alone
    (b"BZh9" + BZ2_BLOCK + b"rest", "bz2"), (b"\x1f\x8b\x08" + b"\x00" * 20, "gzip"),
])
def test_sniff_each_magic_and_its_near_misses(head, fmt):
    assert scan_input.sniff(head) == fmt


def _compressed(fmt: str, data: bytes) -> bytes:
    return {"plain": lambda d: d, "gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[fmt](data)


class _Trickle(io.RawIOBase):
    """A pipe that hands out at most `step` bytes a read, and only has read/readinto (no readinto1)."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._step = data, step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._step, len(self._data))
        buffer[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


@pytest.mark.parametrize("fmt", ["plain", "gzip", "bz2", "xz"])
@pytest.mark.parametrize("step", [1, 3, 10, 1 << 20])
def test_decompressed_reads_every_format_back_whole_however_the_bytes_arrive(fmt, step):
    stream, got = scan_input.decompressed(_Trickle(_compressed(fmt, TEXT), step), "p")  # type: ignore[arg-type]
    assert got == fmt and stream.read() == TEXT


@pytest.mark.parametrize("data", [b"", b"a", b"BZh9", b"x" * 9, b"x" * 10, b"x" * 11])
def test_decompressed_plain_streams_shorter_and_longer_than_the_head(data):
    stream, fmt = scan_input.decompressed(io.BytesIO(data), "p")
    assert fmt == "plain" and stream.read() == data


def test_decompressed_reads_the_stream_once_and_only_its_head_to_sniff():
    source = io.BytesIO(gzip.compress(TEXT))
    assert scan_input._read_head(source) == gzip.compress(TEXT)[:scan_input.HEAD_BYTES]
    assert source.tell() == scan_input.HEAD_BYTES == 10


@pytest.mark.parametrize("step", [1, 3, 7, 10, 64])
def test_read_head_takes_the_head_and_not_a_byte_more_however_the_bytes_arrive(step):
    data = bytes(range(40))
    source = _Trickle(data, step)
    assert scan_input._read_head(source) == data[:10]  # type: ignore[arg-type]
    assert source.read() == data[10:]


def test_prefixed_hands_on_what_a_pipe_has_without_waiting_to_fill_its_buffer():
    # one read of the stream underneath, as a live pipe gives it: a line is scanned as it arrives
    rest = io.BufferedReader(_Trickle(b"abcdefgh", 3))
    assert scan_input._Prefixed(b"", rest).readinto(bytearray(100)) == 3  # type: ignore[arg-type]


def test_decompressed_hands_lines_to_a_line_reader():
    stream, _ = scan_input.decompressed(io.BytesIO(gzip.compress(b"a\nb\n")), "p")
    assert list(stream) == [b"a\n", b"b\n"]


def test_decompressed_zstd_without_its_module_is_named_unreadable(monkeypatch):
    monkeypatch.setattr(scan_input, "zstandard", None)
    with pytest.raises(Unreadable) as raised:
        scan_input.decompressed(io.BytesIO(b"\x28\xb5\x2f\xfd" + b"\x00" * 20), "logs/run.zst")
    assert str(raised.value) == ("logs/run.zst: zstd-compressed, and the zstandard module is not installed "
                                 "(pip install zstandard, or decompress it first: zstd -dc logs/run.zst | rlcheck "
                                 "scan -)")


def test_decompressed_zstd_with_its_module_reads_across_frames(monkeypatch):
    seen: dict = {}

    class Decompressor:
        def stream_reader(self, raw, **kw):
            seen.update(kw, data=raw.read())
            return "reader"

    class Zstandard:
        ZstdDecompressor = Decompressor

    monkeypatch.setattr(scan_input, "zstandard", Zstandard)
    data = b"\x28\xb5\x2f\xfd" + b"frames" * 3
    assert scan_input.decompressed(io.BytesIO(data), "p") == ("reader", "zstd")
    assert seen == {"read_across_frames": True, "data": data}  # the sniffed head is handed on, not lost


def test_prefixed_gives_the_head_then_the_rest_in_small_reads():
    raw = scan_input._Prefixed(b"abcde", io.BytesIO(b"fgh"))
    assert raw.readable() is True
    buf = bytearray(3)
    assert [raw.readinto(buf), bytes(buf)] == [3, b"abc"]
    assert [raw.readinto(buf), bytes(buf[:2])] == [2, b"de"]
    assert [raw.readinto(buf), bytes(buf)] == [3, b"fgh"]
    assert raw.readinto(buf) == 0


def test_prefixed_rest_that_returns_none_reads_as_the_end():
    class NonBlocking(io.RawIOBase):
        def readinto(self, buffer):
            return None

    assert scan_input._Prefixed(b"", NonBlocking()).readinto(bytearray(4)) == 0  # type: ignore[arg-type]


def test_open_input_stdin_and_a_path(tmp_path, monkeypatch):
    fake = io.TextIOWrapper(io.BytesIO(b"in"))
    monkeypatch.setattr(sys, "stdin", fake)
    assert scan_input.open_input("-") is fake.buffer
    (tmp_path / "a.log").write_bytes(b"\x00bytes")
    with scan_input.open_input(str(tmp_path / "a.log")) as f:
        assert f.read() == b"\x00bytes"
    with pytest.raises(FileNotFoundError):
        scan_input.open_input(str(tmp_path / "missing.log"))


@pytest.mark.parametrize(("mode", "kind"), [
    (stat.S_IFIFO, "a FIFO"), (stat.S_IFSOCK, "a socket"), (stat.S_IFCHR, "a character device"),
    (stat.S_IFBLK, "a block device"), (stat.S_IFDIR, "not a regular file"), (0, "not a regular file"),
])
def test_kind_names_what_is_not_a_file(mode, kind):
    assert scan_input._kind(mode | 0o644) == kind


def test_expand_keeps_files_stdin_and_missing_paths_as_given(tmp_path):
    (tmp_path / "a.log").write_text("x")
    paths = ["-", str(tmp_path / "a.log"), str(tmp_path / "missing.log")]
    assert list(scan_input.expand(paths)) == [Entry(path=p) for p in paths]


def test_expand_dash_is_stdin_even_beside_a_directory_named_dash(tmp_path, monkeypatch):
    (tmp_path / "-").mkdir()
    (tmp_path / "-" / "a.log").write_text("x")
    monkeypatch.chdir(tmp_path)
    assert list(scan_input.expand(["-"])) == [Entry(path="-")]
    assert list(scan_input.expand(["./-"])) == [Entry(path="./-/a.log")]


def test_expand_walks_a_tree_sorted_and_nested(tmp_path):
    for rel in ("b.log", "a/z.log", "a/y/x.log", "c.gz", "B.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    got = [e.path for e in scan_input.expand([str(tmp_path)])]
    assert got == [str(tmp_path / r) for r in ("B.log", "a/y/x.log", "a/z.log", "b.log", "c.gz")]


def test_expand_links_followed_loops_cut_and_a_tree_given_twice_walked_once(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.log").write_text("x")
    (tmp_path / "d" / "loop").symlink_to(tmp_path / "d")
    (tmp_path / "d" / "to-file").symlink_to(tmp_path / "d" / "f.log")
    got = list(scan_input.expand([str(tmp_path / "d"), str(tmp_path / "d")]))
    assert got == [Entry(path=str(tmp_path / "d" / "f.log")), Entry(path=str(tmp_path / "d" / "to-file"))]


def test_expand_names_dangling_links_fifos_and_devices_in_a_tree(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "null").symlink_to("/dev/null")
    got = list(scan_input.expand([str(tmp_path)]))
    assert got == [
        Entry(path="", error=f"{tmp_path / 'dangling'}: No such file or directory (a dangling symlink)"),
        Entry(path="", error=f"{tmp_path / 'fifo'}: a FIFO inside a directory, not read (give it by name to scan it)"),
        Entry(path="", error=f"{tmp_path / 'null'}: a character device inside a directory, not read (give it by name "
                             "to scan it)")]


def test_expand_an_entry_that_cannot_be_stated_is_named_without_the_symlink_note(tmp_path, monkeypatch):
    (tmp_path / "a.log").write_text("x")
    real = os.stat

    def stat_refused(path, *a, **kw):
        if str(path).endswith("a.log"):
            raise PermissionError(13, "Permission denied")
        return real(path, *a, **kw)

    monkeypatch.setattr(scan_input.os, "stat", stat_refused)
    assert list(scan_input.expand([str(tmp_path)])) == [
        Entry(path="", error=f"{tmp_path / 'a.log'}: Permission denied")]


@pytest.mark.parametrize(("exc", "why"), [
    (PermissionError(13, "Permission denied"), "Permission denied"), (OSError("no strerror"), "no strerror"),
])
def test_expand_a_directory_that_cannot_be_listed_is_named(tmp_path, monkeypatch, exc, why):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.log").write_text("x")
    (tmp_path / "z.log").write_text("x")
    real = os.scandir

    def refuse(path):
        if str(path).endswith("sub"):
            raise exc
        return real(path)

    monkeypatch.setattr(scan_input.os, "scandir", refuse)
    assert list(scan_input.expand([str(tmp_path)])) == [
        Entry(path="", error=f"{tmp_path / 'sub'}: cannot list the directory: {why}"),
        Entry(path=str(tmp_path / "z.log"))]


def test_expand_a_child_stat_error_without_strerror_names_the_error(tmp_path, monkeypatch):
    (tmp_path / "a.log").write_text("x")
    real = os.stat

    def odd(path, *a, **kw):
        if str(path).endswith("a.log"):
            raise OSError("odd failure")
        return real(path, *a, **kw)

    monkeypatch.setattr(scan_input.os, "stat", odd)
    assert list(scan_input.expand([str(tmp_path)])) == [Entry(path="", error=f"{tmp_path / 'a.log'}: odd failure")]
