"""The image's torch_memory_saver fix, on copies of the real 0.0.10 wheel files: fixes, then stays a no-op."""

from __future__ import annotations

import shutil

from rlcheck.fixes import tms_preload
from rlcheck.probes.node import tms


def copy_wheel_libraries(tmp_path):
    folder = tms.package_dir()
    assert folder is not None
    for lib in folder.glob("torch_memory_saver_hook_mode_*.abi3.so"):
        shutil.copy2(lib, tmp_path / lib.name)
    return tmp_path


def test_fix_tms_preload_makes_the_named_library_cu13(tmp_path):
    folder = copy_wheel_libraries(tmp_path)
    assert tms.choose("slime-v0.2.4", folder) and tms.cudart_major(tms.choose("slime-v0.2.4", folder)) == 12
    assert tms_preload.main(["--cuda-major", "13", "--folder", str(folder)]) == 0
    assert tms.cudart_major(tms.choose("slime-v0.2.4", folder)) == 13
    assert tms.cudart_major(folder / "torch_memory_saver_hook_mode_preload.abi3.so.orig") == 12
    assert tms_preload.plan(folder, 13) == []  # self-neutralizing: a second run changes nothing


def test_fix_tms_preload_leaves_a_cuda12_image_alone(tmp_path):
    folder = copy_wheel_libraries(tmp_path)
    assert tms_preload.plan(folder, 12) == []


def test_fix_tms_preload_dry_run_changes_nothing(tmp_path, capsys):
    folder = copy_wheel_libraries(tmp_path)
    tms_preload.main(["--cuda-major", "13", "--folder", str(folder), "--dry-run"])
    assert "torch_memory_saver_hook_mode_preload.abi3.so <- torch_memory_saver_hook_mode_preload_cu13" in \
        capsys.readouterr().out
    assert tms.cudart_major(folder / "torch_memory_saver_hook_mode_preload.abi3.so") == 12
