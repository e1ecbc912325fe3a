"""What the capture sandbox shows a launch script, written as the shell set-up run inside its namespaces.

Inside fresh user, mount, PID, network and IPC namespaces (rlcheck.job.sandbox) the set-up, still holding the
namespace's capabilities:
- hides what could carry a secret: home directories, /root, /run (secrets and host sockets), cloud and cluster
  credentials, /etc/shadow and its kin (empty tmpfs over a directory, an empty read-only file over a file);
- gives the script a private /tmp, /dev/shm, /root and HOME (size-capped tmpfs: a launch that runs `mkdir -p
  /root/models` as in the frameworks' images goes on) and a /dev with only null, zero, full, random and urandom;
- shows the framework checkout the script lives in where the framework's image keeps it (/root/slime, /root/miles:
  SLIME's and Miles' Dockerfiles clone there, and their scripts `source /root/slime/scripts/models/...`), read-only;
- binds back, read-only, what capture needs that sat under a hidden or private tree: rlcheck's interpreter and
  package, the script's directory, the directory it runs from, the call record (the one writable host path);
- moves the script into a private root (a size-capped tmpfs holding every top-level tree, bound with its mounts):
  a launch may create a top-level site path (/data/ray/signals), the host's root is detached;
- then makes every other mount read-only and drops every capability (setpriv), so nothing can be remounted.
A set-up step that fails stops the sandbox before the script runs (fail closed).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shlex
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

TMPFS_SIZE = "128m"
"""Size cap of each private tmpfs (/tmp, /dev/shm, HOME): what the script writes lives in memory, bounded."""
# Directories shown empty: homes (ssh keys, cloud credentials, shell history), /root, /run and /var/run (host
# sockets such as docker.sock, /run/secrets), and the trees where a node keeps cluster credentials or logs.
HIDDEN_DIRS = ("/root", "/home", "/run", "/var/run", "/var/lib/kubelet", "/var/lib/docker", "/var/lib/containerd",
               "/etc/kubernetes", "/etc/ssl/private", "/etc/ssh", "/var/backups", "/var/log", "/var/mail",
               "/var/spool", "/var/lib/sss", "/etc/sudoers.d")
HIDDEN_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/security/opasswd",
                "/etc/krb5.keytab", "/etc/sudoers", "/etc/machine-id")
# Under a home: hidden again where a kept directory (say the working directory) lies in that home.
HOME_SECRETS = (".aws", ".config/gcloud", ".kube", ".docker", ".ssh", ".netrc", ".git-credentials", ".gnupg",
                ".huggingface", ".cache/huggingface", ".config/gh", ".azure", ".pgpass", ".bash_history",
                ".zsh_history", ".python_history", ".npmrc", ".pypirc", ".config/wandb", ".vault-token",
                ".terraform.d", ".oci", ".ray")
PRIVATE_ROOT = "/root"
"""The hidden tree the script may write into (an empty private tmpfs, as HOME): the images' launches write there."""
DEVICES = ("null", "zero", "full", "random", "urandom")
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/dev", "/proc", "/sys", "/var/lib/nobody", "/nonexistent")
"""A system account's "home" in one of these trees is no caller's home (a /library/alice still is)."""
SETPRIV = ("setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Layout:
    """The paths one sandbox run is built from (all absolute)."""

    base: str
    """rlcheck's own directory for the run (the shims, the empty file, the call record): kept in view."""
    home: str
    """The script's HOME: a private tmpfs."""
    record_dir: str
    """Where the fakes write the call record: the only host path left writable."""
    cwd: str
    """Where the script starts: kept in view, read-only."""
    keep: tuple[str, ...]
    """Host paths the script must still see (interpreter, package, the script's directory), read-only."""
    homes: tuple[str, ...] = ()
    """Home directories whose credential files are hidden again when a kept path lies in them."""
    checkout: tuple[str, str] | None = None
    """(the framework tree the script lives in, where the framework's image keeps it: /root/slime) or None."""
    shown: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(a host folder shown at its own path through a private overlay, the credential places in it hidden again),
    outermost first (rlcheck.job.shown)."""


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def hidden_roots(extra_homes: Iterable[str] = (), *, nested: bool = False) -> list[str]:
    """The directories covered by an empty tmpfs (existing ones, symlinks resolved, outermost first; nested: also
    the ones inside another)."""
    roots: list[str] = []
    for path in sorted({os.path.realpath(p) for p in (*HIDDEN_DIRS, *extra_homes) if os.path.isdir(p)}):
        if path != "/" and (nested or not any(_under(path, r) for r in roots)):
            roots.append(path)
    return roots


def to_bind_back(keep: Iterable[str], covered: Sequence[str]) -> list[str]:
    """The kept paths that lie strictly inside a covered tree (a covered root itself, say /root, stays hidden),
    outermost first, without one inside another."""
    out: list[str] = []
    for path in sorted({os.path.realpath(p) for p in keep if os.path.exists(p)}):
        inside = any(_under(path, r) and path != r for r in covered)
        if inside and not any(_under(path, k) for k in out) and path not in covered:
            out.append(path)
    return out


def secrets_in_view(kept: Sequence[str], homes: Iterable[str]) -> list[str]:
    """Credential files of a home that a kept path brings back into view: hidden again."""
    found = []
    for home in homes:
        for rel in HOME_SECRETS:
            path = os.path.join(home, rel)
            if os.path.lexists(path) and any(_under(path, k) for k in kept):
                found.append(path)
    return found


def _q(path: str) -> str:
    return shlex.quote(path)


def _hide_files() -> list[str]:
    names = [*HIDDEN_FILES, *glob.glob("/etc/ssh/ssh_host_*key")]
    return [f"mount --bind -o ro \"$EMPTY\" {_q(p)}" for p in names if os.path.isfile(p)]


def _dev(stage: str) -> list[str]:
    lines = [f"mount -t tmpfs -o mode=755,size=1m,nosuid tmpfs {_q(stage)}"]
    for name in DEVICES:
        lines += [f"touch {_q(stage)}/{name}", f"mount --bind /dev/{name} {_q(stage)}/{name}"]
    lines += [f"mkdir {_q(stage)}/shm {_q(stage)}/pts",
              f"mount -t tmpfs -o mode=1777,size={TMPFS_SIZE},nosuid,nodev tmpfs {_q(stage)}/shm"]
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        lines.append(f"ln -s {target} {_q(stage)}/{name}")
    return [*lines, f"mount --move {_q(stage)} /dev"]


def prologue(layout: Layout) -> str:
    """The set-up script (run by bash as PID 1 of the namespaces); it ends by exec-ing the command without
    capabilities."""
    covered = [r for r in hidden_roots(layout.homes) if not _under(r, "/tmp")]
    roots = ["/tmp", *covered]
    kept = to_bind_back([layout.base, layout.cwd, *layout.keep], roots)
    lines = ["set -eu", f"EMPTY={_q(layout.base)}/empty"]
    # Hold each kept path open before its tree is covered; bind it back through the descriptor (-c: mount must
    # not resolve /proc/self/fd/N to the path, which is hidden by then).
    lines += [f"exec {10 + i}<{_q(p)}" for i, p in enumerate([*kept, *(d for d, _ in layout.shown)])]
    lines += _hide_files()
    lines += _dev(f"{layout.base}/dev")
    lines.append(f"mount -t tmpfs -o mode=1777,size={TMPFS_SIZE},nosuid,nodev tmpfs /tmp")
    lines += [f"mount -t tmpfs -o mode=700,size={TMPFS_SIZE},nosuid,nodev tmpfs {_q(r)}" if r == PRIVATE_ROOT else
              f"mount -t tmpfs -o mode=755,size=1m,nosuid,nodev tmpfs {_q(r)}" for r in covered]
    for i, path in enumerate(kept):
        make = f"mkdir -p {_q(path)}" if os.path.isdir(path) else f"mkdir -p {_q(os.path.dirname(path))} && " \
                                                                   f": > {_q(path)}"
        lines += [make, f"mount -c --bind /proc/self/fd/{10 + i} {_q(path)}", f"exec {10 + i}<&-"]
    # A hidden tree (a home) that a kept path brings back into view, and a home's credentials in a kept path.
    again = [r for r in hidden_roots(layout.homes, nested=True) if any(_under(r, k) and r != k for k in kept)]
    lines += [f"mount -t tmpfs -o mode=700,size=1m,nosuid,nodev tmpfs {_q(p)}" if os.path.isdir(p) else
              f"mount --bind -o ro \"$EMPTY\" {_q(p)}" for p in
              [*again, *(p for p in secrets_in_view(kept, layout.homes) if not any(_under(p, r) for r in again))]]
    for j, (folder, secrets) in enumerate(layout.shown):
        lines += _show(folder, secrets, 10 + len(kept) + j, f"{layout.base}/show{j}")
    lines += [f"mount -t tmpfs -o mode=700,size={TMPFS_SIZE},nosuid,nodev tmpfs {_q(layout.home)}",
              f"mount --bind {_q(layout.record_dir)} {_q(layout.record_dir)}"]
    lines += _overlay(layout.cwd, f"{layout.base}/ovl")
    if layout.checkout and PRIVATE_ROOT in covered and layout.checkout[0] != layout.checkout[1]:
        tree, at = layout.checkout  # the tree is kept (bound back above); shown again at the image's place
        lines += [f"mkdir -p {_q(at)}", f"mount --bind {_q(tree)} {_q(at)}"]
    lines += _private_root(f"{layout.base}/root")
    writable = ["/", "/tmp", "/dev/shm", layout.home, layout.record_dir, f"{layout.base}/ovl",
                *([PRIVATE_ROOT] if PRIVATE_ROOT in covered else []),
                *(p for j, (d, _) in enumerate(layout.shown) for p in (d, f"{layout.base}/show{j}"))]
    lines.append(_read_only_loop(writable, layout.cwd))
    # The fakes tell their output going to capture from a command substitution by this pipe's name.
    lines += [f"cd {_q(layout.cwd)}", 'RLCHECK_STDOUT=$(readlink /proc/$$/fd/1)',
              'export RLCHECK_STDOUT BASH_ENV="$RLCHECK_BASH_ENV"',
              'exec ' + " ".join(SETPRIV) + ' "$@"']
    return "\n".join(lines) + "\n"


SBIN = "/usr/local/sbin:/usr/sbin:/sbin"


def pivot_root() -> str | None:
    """util-linux's pivot_root (in sbin, often not on a user's PATH), or None."""
    return shutil.which("pivot_root") or shutil.which("pivot_root", path=SBIN)


OLD_ROOT = ".rlcheck-old-root"
"""Where pivot_root puts the host's root in the new one, detached at once."""


def _private_root(stage: str) -> list[str]:
    """A new root for the script: a size-capped private tmpfs holding every top-level entry of the root as set up
    so far (a directory bound recursively with the mounts that hide or keep paths in it, a link as a link, a file
    bound), then pivot_root into it and the host's root detached. A launch that creates a site path at the top
    (`mkdir -p /data/ray/signals`, checkpoints under `/node_public`) writes into the private tmpfs; every tree that
    exists on the host stays as read-only as before. The stage lies in a top-level tree (/tmp), so that tree's
    recursive copy holds a view of the stage itself: it is bound first and the view detached before anything else."""
    top = "/" + stage.strip("/").split("/")[0]
    s, t = _q(stage), _q(top)
    loop = ("for e in /* /.[!.]* /..?*; do\n"
            "  n=${e#/}\n"
            f"  if [ \"$e\" = {t} ] || {{ [ ! -e \"$e\" ] && [ ! -L \"$e\" ]; }}; then continue\n"
            f"  elif [ -L \"$e\" ]; then ln -s \"$(readlink \"$e\")\" {s}/\"$n\" || exit 1\n"
            f"  elif [ -d \"$e\" ]; then {{ mkdir {s}/\"$n\" && mount --rbind \"$e\" {s}/\"$n\"; }} || exit 1\n"
            f"  else {{ : > {s}/\"$n\" && mount --bind \"$e\" {s}/\"$n\"; }} || exit 1\n"
            "  fi\n"
            "done")
    # one command a line: `set -e` ends the set-up on any of them (a failure inside an && list would not)
    return [f"mount -t tmpfs -o mode=755,size={TMPFS_SIZE},nosuid,nodev tmpfs {s}", f"mkdir {_q(stage + top)}",
            f"mount --rbind {t} {_q(stage + top)}", f"umount -l {_q(stage + stage)}", loop, f"mkdir {s}/{OLD_ROOT}",
            f"cd {s}", f"{_q(pivot_root() or 'pivot_root')} . {OLD_ROOT}", f"umount -l /{OLD_ROOT}",
            f"rmdir /{OLD_ROOT}"]


_MOUNTINFO_ESCAPES = {" ": "\\040", "\t": "\\011", "\n": "\\012", "\\": "\\134"}


def _overlay(cwd: str, upper: str) -> list[str]:
    """The start directory writable for the script through an overlay whose upper layer is a private tmpfs (the
    host's files stay as they were), as a launch that writes `stage2.sh` or `logs/` beside itself expects. Only
    where no mount lies below it: an overlay shows its lower tree without the mounts that hide secrets in it."""
    # mountinfo writes a space, tab, newline and backslash of a mount point as an octal escape (\\040): compared so
    # written, and through the environment (awk -v would undo the backslashes)
    below = "".join(_MOUNTINFO_ESCAPES.get(c, c) for c in f"{cwd.rstrip('/')}/")
    return [f"OVERLAY=; if ! RLCHECK_BELOW={_q(below)} awk 'index($5, ENVIRON[\"RLCHECK_BELOW\"]) == 1 {{f = 1}} "
            f"END {{exit !f}}' /proc/self/mountinfo"
            f" && mount -t tmpfs -o mode=700,size={TMPFS_SIZE},nosuid,nodev tmpfs {_q(upper)}"
            f" && mkdir {_q(upper)}/upper {_q(upper)}/work && mount -t overlay overlay -o"
            f" lowerdir={_q(cwd)},upperdir={_q(upper)}/upper,workdir={_q(upper)}/work {_q(cwd)} 2>/dev/null;"
            f" then OVERLAY=1; fi"]


def _show(folder: str, secrets: Sequence[str], fd: int, upper: str) -> list[str]:
    """A host folder shown at its own path, writable through an overlay whose upper layer is a private size-capped
    tmpfs (the host folder stays as it was); its lower layer is the folder held open before the hidden trees were
    covered (the overlay takes it through the descriptor: no other view of it stays mounted), then every credential
    place in it hidden again on top. The overlay shows the folder's own file system, without mounts inside it."""
    q = _q(upper)
    lines = [f"mkdir -p {_q(folder)} {q}", f"mount -t tmpfs -o mode=700,size={TMPFS_SIZE},nosuid,nodev tmpfs {q}",
             f"mkdir {q}/upper {q}/work",
             f"mount -t overlay overlay -o lowerdir=/proc/self/fd/{fd},upperdir={q}/upper,workdir={q}/work "
             f"{_q(folder)}", f"exec {fd}<&-"]
    # a link named as a credential is hidden where it leads, unless that is out of view already (a hidden home)
    return lines + [f"[ ! -e {_q(p)} ] || mount -t tmpfs -o mode=700,size=1m,nosuid,nodev tmpfs {_q(p)}"
                    if os.path.isdir(p) else f"[ ! -e {_q(p)} ] || mount --bind -o ro \"$EMPTY\" {_q(p)}"
                    for p in secrets]


def _read_only_loop(writable: Sequence[str], cwd: str) -> str:
    """Every mount but the private writable ones, /proc and the device nodes becomes read-only; one that cannot
    stops the sandbox, unless its path is already not writable (a mount covered by a hidden tree or the new /dev).
    Mount points come from mountinfo, octal escapes (\\040) undone by printf %b."""
    keep_rw = "|".join(_q(p) for p in writable)
    return ("awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r raw; do\n"
            "  m=$(printf '%b' \"$raw\")\n"
            f"  [ -n \"$OVERLAY\" ] && [ \"$m\" = {_q(cwd)} ] && continue\n"
            "  case \"$m\" in\n"
            f"    {keep_rw}|/proc|/proc/*|/dev/null|/dev/zero|/dev/full|/dev/random|/dev/urandom) ;;\n"
            "    *) mount -o remount,bind,ro \"$m\" 2>/dev/null || [ ! -w \"$m\" ] ||"
            " { echo \"rlcheck sandbox: cannot make $m read-only\" >&2; exit 1; } ;;\n"
            "  esac\n"
            "done")


def caller_homes() -> tuple[str, ...]:
    """Home directories that may hold the caller's credentials: $HOME and the password database's homes."""
    homes = {os.path.expanduser("~"), "/root"}
    try:
        with open("/etc/passwd", "rb") as passwd:  # bytes: the same homes whatever the locale's encoding
            homes |= {line.decode("utf-8", errors="replace").split(":")[5] for line in passwd if line.count(b":") >= 6}
    except OSError:
        pass
    return tuple(sorted(h for h in homes if h.startswith("/") and h != "/" and Path(h).is_dir()
                        and not any(_under(h, tree) for tree in SYSTEM_TREES)))
