"""Rule table for the torch_memory_saver preload fix (rlcheck.fixes.tms_preload): which copies are planned (each
stem on its own; a missing file, a name already matching the runtime, a suffixed build for another runtime), that
the original is kept once as .orig, and the whole output and exit code of each run (nothing installed, nothing to do,
a dry run, a real one). A stand-in for the ELF reader; test_fix_tms_preload.py uses the real wheel's libraries."""

from __future__ import annotations

import types

import pytest

from rlcheck.fixes import tms_preload

PRE, TORCH = "torch_memory_saver_hook_mode_preload", "torch_memory_saver_hook_mode_torch"


@pytest.fixture
def libs(monkeypatch, tmp_path):
    """Write libraries whose libcudart major the stand-in reader answers: {file name: major or None}."""
    majors: dict[str, int | None] = {}
    folder: dict = {"dir": tmp_path}
    monkeypatch.setattr(tms_preload, "tms", types.SimpleNamespace(cudart_major=lambda p: majors[p.read_text()],
                                                                  package_dir=lambda: folder["dir"]))

    def write(files: dict[str, int | None]) -> tuple:
        for name, major in files.items():
            text = f"{name}:{major}"
            majors[text] = major
            (tmp_path / name).write_text(text)
        return tmp_path, folder

    return write


def so(stem: str, suffix: str = "") -> str:
    return f"{stem}{suffix}.abi3.so"


@pytest.mark.parametrize(("files", "cuda", "planned"), [
    ({so(PRE): 12, so(PRE, "_cu13"): 13, so(TORCH): 12, so(TORCH, "_cu13"): 13}, 13, [PRE, TORCH]),
    ({so(PRE): 12, so(PRE, "_cu13"): 13, so(TORCH): 13, so(TORCH, "_cu13"): 13}, 13, [PRE]),
    ({so(PRE): 13, so(PRE, "_cu13"): 13, so(TORCH): 12, so(TORCH, "_cu13"): 13}, 13, [TORCH]),
    ({so(PRE): 12, so(PRE, "_cu13"): 13}, 13, [PRE]),  # no torch-mode files: that stem is skipped
    ({so(PRE, "_cu13"): 13, so(TORCH): 12, so(TORCH, "_cu13"): 13}, 13, [TORCH]),  # no unsuffixed file
    ({so(PRE): 12, so(TORCH): 12, so(TORCH, "_cu13"): 13}, 13, [TORCH]),  # no suffixed build
    ({so(PRE): 12, so(PRE, "_cu12"): 12}, 12, []),  # already the runtime's
    ({so(PRE): 12, so(PRE, "_cu13"): 12}, 13, []),  # the "cu13" build does not need cudart 13: no copy
    ({so(PRE): None, so(PRE, "_cu13"): 13}, 13, [PRE]),  # a library naming no cudart is not the runtime's
    ({so(PRE): 12, so(PRE, "_cu13"): None}, 13, []),
    ({}, 13, []),
])
def test_each_stem_is_copied_only_when_the_suffixed_build_is_the_runtimes(libs, files, cuda, planned):
    folder, _ = libs(files)
    assert tms_preload.plan(folder, cuda) == [(folder / so(s, f"_cu{cuda}"), folder / so(s)) for s in planned]


def test_apply_copies_and_keeps_the_original_once(libs):
    folder, _ = libs({so(PRE): 12, so(PRE, "_cu13"): 13})
    copies = tms_preload.plan(folder, 13)
    tms_preload.apply(copies)
    assert (folder / so(PRE)).read_text() == f"{so(PRE, '_cu13')}:13"
    assert (folder / f"{so(PRE)}.orig").read_text() == f"{so(PRE)}:12"
    (folder / so(PRE, "_cu13")).write_text("newer")
    tms_preload.apply(copies)  # a second run keeps the first original, not the copy it made
    assert (folder / so(PRE)).read_text() == "newer"
    assert (folder / f"{so(PRE)}.orig").read_text() == f"{so(PRE)}:12"


def test_a_run_that_fixes_says_each_copy(libs, capsys):
    folder, _ = libs({so(PRE): 12, so(PRE, "_cu13"): 13, so(TORCH): 12, so(TORCH, "_cu13"): 13})
    assert tms_preload.main(["--cuda-major", "13", "--folder", str(folder)]) == 0
    assert capsys.readouterr().out == (
        f"tms_preload: {so(PRE)} <- {so(PRE, '_cu13')} (CUDA 13)\n"
        f"tms_preload: {so(TORCH)} <- {so(TORCH, '_cu13')} (CUDA 13)\n")
    assert (folder / so(TORCH)).read_text() == f"{so(TORCH, '_cu13')}:13"


def test_a_dry_run_says_the_copies_and_makes_none(libs, capsys):
    folder, _ = libs({so(PRE): 12, so(PRE, "_cu13"): 13})
    assert tms_preload.main(["--cuda-major", "13", "--folder", str(folder), "--dry-run"]) == 0
    assert capsys.readouterr().out == f"tms_preload: {so(PRE)} <- {so(PRE, '_cu13')} (CUDA 13)\n"
    assert (folder / so(PRE)).read_text() == f"{so(PRE)}:12" and not (folder / f"{so(PRE)}.orig").exists()


def test_nothing_to_do_says_so(libs, capsys):
    folder, _ = libs({so(PRE): 12, so(PRE, "_cu12"): 12})
    assert tms_preload.main(["--cuda-major", "12"]) == 0  # the folder defaults to the package's
    assert capsys.readouterr().out == ("tms_preload: the libraries SLIME picks by name already need "
                                       "libcudart.so.12\n")
    assert sorted(p.name for p in folder.iterdir()) == [so(PRE), so(PRE, "_cu12")]


def test_without_torch_memory_saver_there_is_nothing_to_do(libs, capsys):
    _, folder = libs({})
    folder["dir"] = None
    assert tms_preload.main(["--cuda-major", "13"]) == 0
    assert capsys.readouterr().out == "tms_preload: torch_memory_saver is not installed: nothing to do\n"


@pytest.mark.parametrize("argv", [[], ["--cuda-major", "thirteen"]])
def test_the_cuda_major_is_a_required_number(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        tms_preload.main(argv)
    assert exit_.value.code == 2 and "--cuda-major" in capsys.readouterr().err


def test_help_is_the_modules_text_as_written_and_each_options_words(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_:
        tms_preload.main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and tms_preload.__doc__ is not None
    assert out.startswith("usage: ") and f"\n{tms_preload.__doc__}\n" in out
    assert " the image's CUDA runtime major (12, 13)\n" in out
    assert " where the hook libraries are (site-packages)\n" in out
