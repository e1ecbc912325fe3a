"""Folders of the host shown to a captured launch (`rlcheck job capture --job-show DIR`): which are allowed, and what
inside one stays hidden.

A launch may read (and rewrite) files its image holds: Miles' nemotron and GLM-5 launchers patch the model's
/root/models/NAME/config.json before they start the trainer, the geo3k launchers stop unless their dataset lies under
/root/datasets. The sandbox hides /root and the homes (they hold secrets); a folder the user names is shown again at
its own (real) path through a private overlay (rlcheck.job.confine): the script may write there, its writes stay in a
size-capped tmpfs, the host folder never changes. Inside it every credential place is hidden again by the sandbox's
own rules: a home's credential files and directories (confine.HOME_SECRETS: .ssh, .aws, .netrc...) at any depth, a
home inside it. A folder that is a system tree, or is, lies in or holds a credential place, is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from rlcheck.job import confine

SYSTEM_TOPS = ("/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt",
               "/proc", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var")
"""Refused as a whole: the root and its system trees (a folder inside most of them may be shown)."""
KERNEL_TREES = ("/proc", "/sys", "/dev")
"""Refused with everything in them: the kernel's views of processes and devices, no files of a launch."""
HOME_TREES = ("/root", "/home")
"""Hidden trees that are homes: shown only with their credential places hidden again inside."""
WALK_CAP = 100_000
"""Entries a shown folder may hold: each is looked at for a credential name before the script runs."""
ALLOWED = ("allowed: an existing directory that is not / or a top-level system tree, lies in no credential place and "
           "holds none; credential files in it (.ssh, .aws, .netrc, ...) are hidden from the script")


def secret_trees() -> list[str]:
    """The hidden trees that hold secrets themselves (not homes), symlinks resolved."""
    return sorted({os.path.realpath(p) for p in confine.HIDDEN_DIRS if p not in HOME_TREES})


def _named_secret(path: str) -> str | None:
    """The credential name (confine.HOME_SECRETS) path is or lies in, or None."""
    padded = path.rstrip("/") + "/"
    return next((rel for rel in confine.HOME_SECRETS if f"/{rel}/" in padded), None)


def _refusal(real: str) -> str:
    """Why a real directory path cannot be shown, or ''."""
    if real in SYSTEM_TOPS or any(confine._under(real, t) for t in KERNEL_TREES):
        return "is / or a system tree"
    if rel := _named_secret(real):
        return f"is or lies in a credential place ({rel})"
    for tree in secret_trees():
        if confine._under(real, tree):
            return f"is or lies in {tree}, a hidden credential place"
    for place in (*secret_trees(), *confine.HIDDEN_FILES):
        if confine._under(place, real) and place != real and os.path.lexists(place):
            return f"holds {place}, a hidden credential place"
    return ""


def check(dirs: Sequence[str]) -> tuple[str, ...]:
    """The real paths of the folders to show (each once, in order); ValueError names a folder that cannot be shown
    and what is allowed."""
    out: list[str] = []
    for given in dirs:
        real = os.path.realpath(given)
        said = given if real == given else f"{given} (really {real})"
        if not os.path.lexists(given) or not os.path.exists(real):
            why = "does not exist"
        elif not os.path.isdir(real):
            why = "is not a directory"
        else:
            why = _refusal(real)
        if why:
            raise ValueError(f"--job-show {said}: {why}; {ALLOWED}")
        secrets_inside(real)  # over the cap: refused before anything runs
        if real not in out:
            out.append(real)
    return tuple(out)


def secrets_inside(real: str, homes: Iterable[str] = ()) -> tuple[str, ...]:
    """The credential places inside a shown folder, hidden again in the sandbox, outermost first: every entry named
    as a home's credential (at any depth; a link among them when it leads somewhere, which is hidden through it), a
    home inside it, and a home's credentials the folder brings into view (confine.secrets_in_view). A mount inside
    the folder is not walked (the overlay shows the folder's own file system only). ValueError past WALK_CAP."""
    found: set[str] = set()
    device = os.stat(real).st_dev
    seen = 0
    for top, subdirs, files in os.walk(real):
        seen += len(subdirs) + len(files)
        if seen > WALK_CAP:
            raise ValueError(f"--job-show {real}: holds over {WALK_CAP} entries, too many to look through for "
                             f"credential files; show the folder the launch reads (the model's, the dataset's)")
        for name in (*subdirs, *files):
            path = os.path.join(top, name)
            if any(path.endswith("/" + rel) for rel in confine.HOME_SECRETS) and os.path.exists(path):
                found.add(path)
        # os.walk does not follow a link; a mount inside is not in the overlay's view
        subdirs[:] = [d for d in subdirs if os.path.join(top, d) not in found
                      and os.lstat(os.path.join(top, d)).st_dev == device]
    found |= {r for r in confine.hidden_roots(homes, nested=True) if confine._under(r, real) and r != real}
    found |= {p for p in confine.secrets_in_view([real], homes) if os.path.exists(p)}
    ordered: list[str] = []
    for path in sorted(found):
        if not any(confine._under(path, o) for o in ordered):
            ordered.append(path)
    return tuple(ordered)
