"""A child interpreter that sees this environment's packages minus some: how a reproducer makes a package absent.

The mirror is a folder of symlinks to every top-level entry of the site directories except the
excluded ones; the child runs with `python -S` (no site directories of its own), takes the mirror as
its only site directory and gets only the PYTHONPATH given, so Python's own import system reports the
missing package. It also keeps a namespace package (megatron) from mixing a side directory's release
with the environment's.

`python` runs such a child forked from a warm interpreter (rlcheck.process.warm) where one has imported the
packages the child needs and none it must not see: before the child's code runs, the fork's import path becomes the
one the cold child has (PYTHONPATH exactly as given, then the standard library, then the mirror in place of the site
directories), so the same import system reports the same missing package, without importing torch again. A fork
whose server already imported an excluded package is unfit (rlcheck.process.warm UNFIT): the child runs cold.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rlcheck.process import subproc, warm


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


def env(pythonpath: Sequence[str] = (), base: Mapping[str, str] | None = None) -> dict[str, str]:
    """base (default: this process's environment) with PYTHONPATH exactly pythonpath (an inherited one could bring
    the package back)."""
    child = {k: v for k, v in (subproc.child_env() if base is None else base).items() if k != "PYTHONPATH"}
    if pythonpath:
        child["PYTHONPATH"] = os.pathsep.join(pythonpath)
    return child


_FORK_PATH = """
import importlib as _importlib, site as _site, sys as _sys, sysconfig as _sysconfig
_seen = sorted(_m for _m in _sys.modules if _m.partition(".")[0] in _excluded)
_sites = {*_site.getsitepackages(), _sysconfig.get_paths()["purelib"], _sysconfig.get_paths()["platlib"],
          _site.getusersitepackages()}
_at = next((_i for _i, _p in enumerate(_sys.path) if _i and _p in _sites), None)
if _seen or _at is None:
    print(_unfit, "imported:" if _seen else "no site directory on its path", *_seen[:5], file=_sys.stderr)
    raise SystemExit(3)
_sys.path[:] = [_sys.path[0], *_pythonpath, *_sys.path[1:_at], _site_dir,
                *(_p for _p in _sys.path[_at:] if _p not in _sites)]
_importlib.invalidate_caches()
del _importlib, _site, _sys, _sysconfig, _seen, _sites, _at, _excluded, _pythonpath, _site_dir, _unfit
"""


def fork_path(site_dir: Path, excluded: Iterable[str], pythonpath: Sequence[str] = ()) -> str:
    """Code that gives a fork of a warm interpreter the import path `argv(site_dir)` with PYTHONPATH exactly
    pythonpath gives a cold one; it exits UNFIT where the interpreter imported an excluded package already."""
    given = (sorted(excluded), list(pythonpath), str(site_dir), warm.UNFIT)
    return f"_excluded, _pythonpath, _site_dir, _unfit = {given!r}{_FORK_PATH}"


def python(code: str, excluded: Sequence[str], dest: Path, *, base: Mapping[str, str], preload: Sequence[str],
           pythonpath: Sequence[str] = (), runtime: Iterable[str] = (), timeout_s: float) -> subproc.Completed:
    """`argv(site_without(excluded, dest), code)` in `env(pythonpath, base)`: forked from the warm interpreter of
    (preload, base without PYTHONPATH minus runtime) with the cold child's import path, else cold."""
    site_dir = site_without(excluded, dest)
    return warm.python(f"{fork_path(site_dir, excluded, pythonpath)}\n{code}", preload=preload,
                       env=env(pythonpath, base), runtime=(*runtime, "PYTHONPATH"), timeout_s=timeout_s,
                       cold_argv=argv(site_dir, code))
