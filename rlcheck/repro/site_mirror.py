"""A child interpreter that sees this environment's packages minus some: how a reproducer makes a package absent.

The mirror is a folder of symlinks to every top-level entry of the site directories except the
excluded ones; the child runs with `python -S` (no site directories of its own), takes the mirror as
its only site directory and gets only the PYTHONPATH given, so Python's own import system reports the
missing package. It also keeps a namespace package (megatron) from mixing a side directory's release
with the environment's.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

from rlcheck.process import subproc


def site_dirs() -> list[Path]:
    """This interpreter's site directories, in the order it searches them."""
    paths = sysconfig.get_paths()
    found = [*site.getsitepackages(), paths["purelib"], paths["platlib"]]
    return [Path(p) for p in dict.fromkeys(found) if Path(p).is_dir()]


def _excluded(name: str, excluded: tuple[str, ...]) -> bool:
    """'mbridge' excludes the package folder, mbridge.py and mbridge-0.15.1.dist-info."""
    return any(name in (x, f"{x}.py") or name.startswith(f"{x}-") for x in excluded)


def site_without(excluded: Iterable[str], dest: Path) -> Path:
    """A site directory at dest with every entry of the site directories except the excluded import or dist names."""
    names = tuple(excluded)
    dest.mkdir(parents=True, exist_ok=True)
    for directory in site_dirs():
        for entry in directory.iterdir():
            link = dest / entry.name
            if not _excluded(entry.name, names) and not link.exists():  # the first site directory wins
                link.symlink_to(entry)
    return dest


def argv(site_dir: Path, code: str) -> list[str]:
    """`python -S -c` running code with site_dir as its only site directory."""
    return [sys.executable, "-S", "-c", f"import site\nsite.addsitedir({str(site_dir)!r})\n{code}"]


def env(pythonpath: Sequence[str] = ()) -> dict[str, str]:
    """This process's environment with PYTHONPATH exactly pythonpath (an inherited one could bring the package back)."""
    child = subproc.child_env()
    child.pop("PYTHONPATH", None)
    if pythonpath:
        child["PYTHONPATH"] = os.pathsep.join(pythonpath)
    return child
