"""`rlcheck scan` on inputs that used to be missed in silence: pipes, FIFOs, compressed stdin, bz2/xz/zstd,
unreadable directories and files, symlinked and looping trees. Whatever cannot be read is named, exit 2."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlcheck import cli, scan, scan_input

ROOT = Path(__file__).resolve().parents[1]
FAILURE = b"ok line\nKeyError: 'warn'\n"  # uvicorn-log-level on line 2
COMPRESSORS = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def found(result: scan.ScanResult) -> list[tuple[str, int]]:
    return [(f.failure_id, f.line_no) for f in result.findings]


def _feed(path: str, data: bytes) -> threading.Thread:
    """Write data into a pipe or FIFO from another thread (as `<(cmd)` or a producer process would)."""
    def write() -> None:
        with open(path, "wb") as out:
            out.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("fmt", COMPRESSORS)
def test_scan_compressed_pipe_read_once_and_decompressed(fmt):
    # Hostile input: `rlcheck scan <(zcat -f x | gzip)`: the format is sniffed from bytes a pipe gives only once.
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, COMPRESSORS[fmt](FAILURE)), os.close(write_end)),
                              daemon=True)
    writer.start()
    try:
        result = scan.scan_paths([f"/dev/fd/{read_end}"])
    finally:
        os.close(read_end)
    writer.join(5)
    assert found(result) == [("uvicorn-log-level", 2)] and result.errors == []


def test_scan_fifo_with_gzip_does_not_hang(tmp_path):
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    writer = _feed(str(fifo), gzip.compress(FAILURE))
    result = scan.scan_paths([str(fifo)])
    writer.join(5)
    assert found(result) == [("uvicorn-log-level", 2)] and not writer.is_alive()


def test_scan_gzip_on_stdin_decompressed(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(FAILURE))))
    code = cli.main(["scan", "-"])
    assert code == 1 and "<stdin>:2: uvicorn-log-level" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", COMPRESSORS)
def test_scan_format_told_from_bytes_not_name(tmp_path, fmt):
    log = tmp_path / "rotated.log"  # a misleading name: the bytes decide
    log.write_bytes(COMPRESSORS[fmt](b"x\n" * 3 + FAILURE))
    assert found(scan.scan_paths([str(log)])) == [("uvicorn-log-level", 5)]


@pytest.mark.parametrize("head", [b"BZh is how this line starts", b"BZh9 and then plain text", b"\x1f\x8b plain"])
def test_scan_plain_text_starting_like_a_magic_number_stays_plain(tmp_path, head):
    log = tmp_path / "plain.log"
    log.write_bytes(head + b"\n" + FAILURE)
    result = scan.scan_paths([str(log)])
    assert found(result) == [("uvicorn-log-level", 3)] and result.errors == []


def test_scan_empty_compressed_streams_read_as_empty(tmp_path):
    for fmt, compress in COMPRESSORS.items():
        (tmp_path / f"empty.{fmt}").write_bytes(compress(b""))
    result = scan.scan_paths([str(tmp_path)])
    assert result.files == 3 and result.errors == [] and result.findings == []


def test_scan_zstd_decompressed_or_named_as_unreadable(tmp_path, capsys):
    log = tmp_path / "job.log.zst"
    if scan_input.zstandard is not None:
        log.write_bytes(scan_input.zstandard.ZstdCompressor().compress(FAILURE))
        assert found(scan.scan_paths([str(log)])) == [("uvicorn-log-level", 2)]
        return
    log.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)  # a zstd frame header
    code = cli.main(["scan", str(log)])
    err = capsys.readouterr().err
    assert code == 2 and f"{log}: zstd-compressed, and the zstandard module is not installed" in err


def test_scan_corrupt_xz_named_findings_kept(tmp_path):
    raw = lzma.compress(FAILURE + b"filler line\n" * 100000)
    (tmp_path / "bad.xz").write_bytes(raw[: len(raw) // 2])
    result = scan.scan_paths([str(tmp_path / "bad.xz")])
    assert found(result) == [("uvicorn-log-level", 2)]
    assert result.errors and "bad.xz: xz stream broken" in result.errors[0]


def test_scan_symlinked_directory_followed_once_loops_cut(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "job.log").write_bytes(FAILURE)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "logs").symlink_to(tmp_path / "real")  # a symlinked directory: followed
    (tmp_path / "tree" / "loop").symlink_to(tmp_path / "tree")  # a loop back up: not walked twice
    result = scan.scan_paths([str(tmp_path / "tree")])
    assert [(Path(f.path).relative_to(tmp_path).as_posix(), f.line_no) for f in result.findings] == [
        ("tree/logs/job.log", 2)]
    assert result.errors == [] and result.files == 1


def test_scan_dangling_symlink_and_fifo_in_tree_named(tmp_path, capsys):
    (tmp_path / "gone.log").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "pipe.log")
    (tmp_path / "ok.log").write_bytes(b"fine\n")
    code = cli.main(["scan", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{tmp_path / 'gone.log'}: No such file or directory (a dangling symlink)" in err
    assert f"{tmp_path / 'pipe.log'}: a FIFO inside a directory, not read" in err


def _without_dac_override() -> list[str]:
    """argv prefix that takes root's power to read any file (a user running rlcheck does not have it)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root without setpriv: cannot make a directory unreadable to test with")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "tree"
    for path in (tmp_path / "tree" / "locked", tmp_path / "tree" / "secret.log"):
        if path.exists():
            path.chmod(0o755)  # so pytest can clean up


def test_scan_unreadable_directory_and_file_named_exit_2(tree):
    (tree / "locked").mkdir(parents=True)
    (tree / "locked" / "job.log").write_bytes(FAILURE)
    (tree / "secret.log").write_bytes(FAILURE)
    (tree / "ok.log").write_bytes(b"fine\n")
    tree.chmod(0o755)
    (tree / "ok.log").chmod(0o644)
    (tree / "locked").chmod(0)
    (tree / "secret.log").chmod(0)
    done = subprocess.run([*_without_dac_override(), sys.executable, "-m", "rlcheck.cli", "scan", str(tree)],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
                          check=False)
    assert done.returncode == 2, done.stderr
    assert f"{tree / 'locked'}: cannot list the directory: Permission denied" in done.stderr
    assert f"{tree / 'secret.log'}: Permission denied" in done.stderr
    assert "1 file(s), no known failure; 2 input(s) could not be read in full" in done.stdout
