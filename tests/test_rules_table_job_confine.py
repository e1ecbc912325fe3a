"""Rule table for what the capture sandbox shows a launch script (rlcheck.job.confine): which trees are hidden and
which kept paths are bound back (both sides of the path boundaries: a root itself, a sibling sharing its prefix, a
link), a home's credentials hidden again where a kept path shows them, the whole set-up script for a layout (the
private writable trees, the framework checkout at the image's place) and which homes are the caller's; one real run
for a start directory whose path mountinfo escapes."""

from __future__ import annotations

import dataclasses
import os
import shlex

import pytest

from rlcheck.job import confine, sandbox
from rlcheck.job.confine import Layout


@pytest.mark.parametrize(("path", "root", "under"), [
    ("/root", "/root", True),
    ("/root/slime", "/root", True),
    ("/root/slime", "/root/", True),
    ("/rootfs", "/root", False),  # a sibling sharing the prefix
    ("/data/X/b", "/data/X", True),
    ("/data/XY", "/data/X/", False),
    ("/", "/root", False),
    ("/anything", "/", True),
    ("/root", "/root/slime", False),
])
def test_under(path, root, under):
    assert confine._under(path, root) is under


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """tmp/{a, a/b, ab, file, link -> a}; HIDDEN_DIRS: a/b, a missing one and ab (no system tree)."""
    for d in ("a/b", "ab"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "file").write_text("", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    monkeypatch.setattr(confine, "HIDDEN_DIRS", (str(tmp_path / "a/b"), str(tmp_path / "missing"),
                                                 str(tmp_path / "ab")))
    return tmp_path


@pytest.mark.parametrize(("homes", "nested", "roots"), [
    ((), False, ["a/b", "ab"]),
    (("link",), False, ["a", "ab"]),  # a link is its target; a/b lies inside it
    (("link",), True, ["a", "a/b", "ab"]),
    (("file", "missing2", "/"), False, ["a/b", "ab"]),  # not a directory, missing, or the root: never hidden
    (("ab/c",), False, ["a/b", "ab"]),
])
def test_hidden_roots(tree, homes, nested, roots):
    homes = tuple(h if h.startswith("/") else str(tree / h) for h in homes)
    (tree / "ab" / "c").mkdir()
    assert confine.hidden_roots(homes, nested=nested) == [str(tree / r) for r in roots]


@pytest.mark.parametrize(("keep", "covered", "back"), [
    (["a/b"], ["a"], ["a/b"]),
    (["a"], ["a"], []),  # a covered root itself stays hidden
    (["a", "a/b"], ["a", "a/b"], []),
    (["a/b", "a/b/c"], ["a"], ["a/b"]),  # outermost only
    (["a/b/c", "a/b"], ["a"], ["a/b"]),
    (["ab"], ["a"], []),  # a sibling sharing the prefix is not inside
    (["link/b"], ["a"], ["a/b"]),  # through a link: its real path
    (["a/missing"], ["a"], []),
    (["file", "a/b"], ["/"], ["a/b", "file"]),
    (["a/b"], [], []),
])
def test_to_bind_back(tree, keep, covered, back):
    (tree / "a/b/c").mkdir()
    covered = [c if c.startswith("/") else str(tree / c) for c in covered]
    assert confine.to_bind_back([str(tree / k) for k in keep], covered) == [str(tree / b) for b in back]


def test_secrets_in_view_are_a_homes_credentials_under_a_kept_path(tmp_path):
    home, other = tmp_path / "alice", tmp_path / "bob"
    for secret in (".aws", ".config/gcloud", ".ssh", ".cache/huggingface"):
        (home / secret).mkdir(parents=True)
    (home / ".netrc").write_text("", encoding="utf-8")
    (home / ".git-credentials").symlink_to(tmp_path / "nowhere")  # a dangling link still shows its name
    (other / ".kube").mkdir(parents=True)
    (home / "project").mkdir()
    found = confine.secrets_in_view([str(home)], [str(home), str(other)])
    assert found == [str(home / s) for s in (".aws", ".config/gcloud", ".ssh", ".netrc", ".git-credentials",
                                             ".cache/huggingface")]
    assert confine.secrets_in_view([str(home / ".ssh")], [str(home)]) == [str(home / ".ssh")]
    assert confine.secrets_in_view([str(home / "project"), str(tmp_path / "al")], [str(home)]) == []
    assert confine.secrets_in_view([str(tmp_path)], [str(other)]) == [str(other / ".kube")]


def test_home_secrets_and_hidden_trees_name_the_credential_places():
    assert {".aws", ".ssh", ".kube", ".docker", ".netrc", ".git-credentials", ".cache/huggingface", ".config/gcloud",
            ".ray", ".vault-token"} <= set(confine.HOME_SECRETS)
    assert {"/root", "/home", "/run", "/var/run", "/var/lib/kubelet", "/etc/kubernetes", "/etc/ssh"} <= set(
        confine.HIDDEN_DIRS)
    assert {"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/krb5.keytab"} <= set(confine.HIDDEN_FILES)


def test_hide_files_covers_each_existing_file_and_the_host_keys(tmp_path, monkeypatch):
    (tmp_path / "shadow").write_text("", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    (tmp_path / "ssh_host_ed25519_key").write_text("", encoding="utf-8")
    monkeypatch.setattr(confine, "HIDDEN_FILES", (str(tmp_path / "shadow"), str(tmp_path / "missing"),
                                                  str(tmp_path / "dir")))
    patterns = []
    monkeypatch.setattr(confine.glob, "glob", lambda p: patterns.append(p) or [str(tmp_path / "ssh_host_ed25519_key")])
    assert confine._hide_files() == [f'mount --bind -o ro "$EMPTY" {tmp_path}/shadow',
                                     f'mount --bind -o ro "$EMPTY" {tmp_path}/ssh_host_ed25519_key']
    assert patterns == ["/etc/ssh/ssh_host_*key"]


def test_dev_holds_only_the_harmless_devices():
    assert confine._dev("/b/dev") == [
        "mount -t tmpfs -o mode=755,size=1m,nosuid tmpfs /b/dev",
        "touch /b/dev/null", "mount --bind /dev/null /b/dev/null",
        "touch /b/dev/zero", "mount --bind /dev/zero /b/dev/zero",
        "touch /b/dev/full", "mount --bind /dev/full /b/dev/full",
        "touch /b/dev/random", "mount --bind /dev/random /b/dev/random",
        "touch /b/dev/urandom", "mount --bind /dev/urandom /b/dev/urandom",
        "mkdir /b/dev/shm /b/dev/pts", "mount -t tmpfs -o mode=1777,size=128m,nosuid,nodev tmpfs /b/dev/shm",
        "ln -s /proc/self/fd /b/dev/fd", "ln -s /proc/self/fd/0 /b/dev/stdin", "ln -s /proc/self/fd/1 /b/dev/stdout",
        "ln -s /proc/self/fd/2 /b/dev/stderr", "mount --move /b/dev /dev"]


@pytest.mark.parametrize(("cwd", "below", "shown"), [
    ("/w/run", "/w/run/", "/w/run"),
    ("/w/run/", "/w/run/", "/w/run/"),
    ("/w/runX", "/w/runX/", "/w/runX"),
    # mountinfo's escapes of a space, a tab, a newline and a backslash; the path itself quoted for the shell
    ("/w/x y", "'/w/x\\040y/'", "'/w/x y'"),
    ("/w/a\tb\nc\\d", "'/w/a\\011b\\012c\\134d/'", "'/w/a\tb\nc\\d'"),
])
def test_overlay_only_where_no_mount_lies_below_the_start_directory(cwd, below, shown):
    assert confine._overlay(cwd, "/b/ovl") == [
        f"OVERLAY=; if ! RLCHECK_BELOW={below} awk 'index($5, ENVIRON[\"RLCHECK_BELOW\"]) == 1 {{f = 1}} END "
        "{exit !f}' /proc/self/mountinfo && mount -t tmpfs -o mode=700,size=128m,nosuid,nodev tmpfs /b/ovl && "
        "mkdir /b/ovl/upper /b/ovl/work && mount -t overlay overlay -o "
        f"lowerdir={shown},upperdir=/b/ovl/upper,workdir=/b/ovl/work {shown} 2>/dev/null; then OVERLAY=1; fi"]


def test_read_only_loop_leaves_only_the_private_trees_writable():
    assert confine._read_only_loop(["/tmp", "/b/my home"], "/w") == (
        "awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r raw; do\n"
        "  m=$(printf '%b' \"$raw\")\n"
        "  [ -n \"$OVERLAY\" ] && [ \"$m\" = /w ] && continue\n"
        "  case \"$m\" in\n"
        "    /tmp|'/b/my home'|/proc|/proc/*|/dev/null|/dev/zero|/dev/full|/dev/random|/dev/urandom) ;;\n"
        "    *) mount -o remount,bind,ro \"$m\" 2>/dev/null || [ ! -w \"$m\" ] || { echo \"rlcheck sandbox: cannot "
        "make $m read-only\" >&2; exit 1; } ;;\n"
        "  esac\n"
        "done")


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """A run's layout under tmp (so bound back from under /tmp), /root and /var/log the hidden trees."""
    for d in ("base/home", "base/rec", "base/ovl", "work/h1/.aws", "py", "h2/.ssh", "h2/inner"):
        (tmp_path / d).mkdir(parents=True)
    for f in ("base/empty", "shadow", "h2/.netrc", "tool.sh"):
        (tmp_path / f).write_text("", encoding="utf-8")
    if not (os.path.isdir("/root") and os.path.isdir("/var/log")):
        pytest.skip("needs /root and /var/log")
    monkeypatch.setattr(confine, "HIDDEN_DIRS", ("/root", "/var/log", "/nonexistent-rlcheck"))
    monkeypatch.setattr(confine, "HIDDEN_FILES", (str(tmp_path / "shadow"),))
    monkeypatch.setattr(confine.glob, "glob", lambda p: [])
    t = str(tmp_path)
    return Layout(base=f"{t}/base", home=f"{t}/base/home", record_dir=f"{t}/base/rec", cwd=f"{t}/work",
                  keep=(f"{t}/py", f"{t}/h2", f"{t}/tool.sh", f"{t}/gone", f"{t}/py/lib"),
                  homes=(f"{t}/work/h1", f"{t}/h2", f"{t}/h2/inner"), checkout=(f"{t}/work", "/root/slime"))


def _prologue(t: str, kept: list[str], root_private: bool, checkout: bool) -> str:
    lines = ["set -eu", f"EMPTY={t}/base/empty", *(f"exec {10 + i}<{p}" for i, p in enumerate(kept)),
             f'mount --bind -o ro "$EMPTY" {t}/shadow', *confine._dev(f"{t}/base/dev"),
             "mount -t tmpfs -o mode=1777,size=128m,nosuid,nodev tmpfs /tmp",
             *(["mount -t tmpfs -o mode=700,size=128m,nosuid,nodev tmpfs /root"] if root_private else []),
             "mount -t tmpfs -o mode=755,size=1m,nosuid,nodev tmpfs /var/log"]
    for i, p in enumerate(kept):
        make = f"mkdir -p {p}" if os.path.isdir(p) else f"mkdir -p {os.path.dirname(p)} && : > {p}"
        lines += [make, f"mount -c --bind /proc/self/fd/{10 + i} {p}", f"exec {10 + i}<&-"]
    lines += [f"mount -t tmpfs -o mode=700,size=1m,nosuid,nodev tmpfs {t}/h2/inner",  # a home inside a kept home
              f"mount -t tmpfs -o mode=700,size=1m,nosuid,nodev tmpfs {t}/work/h1",  # a home inside a kept tree
              f"mount -t tmpfs -o mode=700,size=1m,nosuid,nodev tmpfs {t}/h2/.ssh",  # a kept home's credentials
              f'mount --bind -o ro "$EMPTY" {t}/h2/.netrc',
              f"mount -t tmpfs -o mode=700,size=128m,nosuid,nodev tmpfs {t}/base/home",
              f"mount --bind {t}/base/rec {t}/base/rec", *confine._overlay(f"{t}/work", f"{t}/base/ovl")]
    if checkout:
        lines += ["mkdir -p /root/slime", f"mount --bind {t}/work /root/slime"]
    lines += [*confine._private_root(f"{t}/base/root")]
    lines += [confine._read_only_loop(["/", "/tmp", "/dev/shm", f"{t}/base/home", f"{t}/base/rec", f"{t}/base/ovl",
                                       *(["/root"] if root_private else [])], f"{t}/work"),
              f"cd {t}/work", "RLCHECK_STDOUT=$(readlink /proc/$$/fd/1)",
              'export RLCHECK_STDOUT BASH_ENV="$RLCHECK_BASH_ENV"',
              'exec setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all --no-new-privs -- "$@"']
    return "\n".join(lines) + "\n"


def test_prologue_of_a_layout(layout, tmp_path):
    t = str(tmp_path)
    kept = [f"{t}/base", f"{t}/h2", f"{t}/py", f"{t}/tool.sh", f"{t}/work"]
    assert confine.prologue(layout) == _prologue(t, kept, root_private=True, checkout=True)


def test_prologue_shows_no_checkout_already_where_the_image_keeps_it(layout, tmp_path, monkeypatch):
    t = str(tmp_path)
    kept = [f"{t}/base", f"{t}/h2", f"{t}/py", f"{t}/tool.sh", f"{t}/work"]
    same = dataclasses.replace(layout, checkout=(f"{t}/work", f"{t}/work"))
    assert confine.prologue(same) == _prologue(t, kept, root_private=True, checkout=False)
    assert confine.prologue(dataclasses.replace(layout, checkout=None)) == _prologue(t, kept, root_private=True,
                                                                                    checkout=False)
    # /root not hidden (not there): nothing private at /root, and nowhere to show the checkout
    monkeypatch.setattr(confine, "HIDDEN_DIRS", ("/var/log",))
    assert confine.prologue(layout) == _prologue(t, kept, root_private=False, checkout=False)


def test_prologue_keeps_a_tree_under_tmp_private_not_hidden(tmp_path, monkeypatch):
    monkeypatch.setattr(confine, "HIDDEN_DIRS", (str(tmp_path),))  # a hidden tree under /tmp is /tmp's own
    monkeypatch.setattr(confine, "HIDDEN_FILES", ())
    (tmp_path / "w").mkdir()
    text = confine.prologue(Layout(base=str(tmp_path), home=f"{tmp_path}/h", record_dir=f"{tmp_path}/r",
                                   cwd=f"{tmp_path}/w", keep=()))
    assert f"tmpfs {tmp_path}\n" not in text and "exec 10<" + str(tmp_path) + "\n" in text


@pytest.mark.parametrize(("passwd", "homes"), [
    # name:x:uid:gid:gecos:home:shell
    ("alice:x:1000:1000::{t}/alice:/bin/bash\nbob:x:1001:1001::{t}/bob:/bin/sh\n", ["{t}/alice", "{t}/bob"]),
    ("short:x:1:1:{t}/alice\n", []),  # fewer than six colons: no home field
    ("five:x:1:1::{t}/alice\n", []),
    # a system account's directory, the root, none, a relative or missing one: no caller's home
    ("".join(f"sys{i}:x:2:2::{d}:/bin/false\n" for i, d in enumerate(
        ("/usr", "/usr/bin", "/bin", "/sbin", "/lib", "/dev", "/proc", "/sys", "/", "/nonexistent", "relative",
         "{t}/gone"))), []),
    ("caf\xe9:x:6:6:\xff:{t}/bob:/bin/sh\n", ["{t}/bob"]),  # not UTF-8: read with replacement
])
def test_caller_homes_are_home_and_the_password_databases_homes(tmp_path, monkeypatch, passwd, homes):
    for d in ("alice", "bob", "me"):
        (tmp_path / d).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    (tmp_path / "passwd").write_bytes(passwd.replace("{t}", str(tmp_path)).encode("latin-1"))
    real_open = open
    monkeypatch.setattr(confine, "open", lambda path, *args, **kw: real_open(
        tmp_path / "passwd" if path == "/etc/passwd" else path, *args, **kw), raising=False)
    expected = {str(tmp_path / "me"), *(h.replace("{t}", str(tmp_path)) for h in homes)}
    expected |= {"/root"} if os.path.isdir("/root") else set()
    assert confine.caller_homes() == tuple(sorted(expected))


def test_system_trees_are_no_homes_but_a_sibling_sharing_their_prefix_is(tmp_path, monkeypatch):
    assert confine.SYSTEM_TREES == ("/usr", "/bin", "/sbin", "/lib", "/dev", "/proc", "/sys", "/var/lib/nobody",
                                    "/nonexistent")
    library = tmp_path / "library"
    library.mkdir()
    monkeypatch.setattr(confine, "SYSTEM_TREES", (str(tmp_path / "lib"), str(tmp_path / "usr")))
    (tmp_path / "usr" / "x").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(library))
    monkeypatch.setattr(confine, "open", lambda path, *args, **kw: (_ for _ in ()).throw(OSError(path)),
                        raising=False)
    assert str(library) in confine.caller_homes()
    monkeypatch.setenv("HOME", str(tmp_path / "usr" / "x"))
    assert str(tmp_path / "usr" / "x") not in confine.caller_homes()


def test_caller_homes_without_a_password_database(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))

    def refuse(path, *args, **kw):
        raise PermissionError(path)

    monkeypatch.setattr(confine, "open", refuse, raising=False)
    assert confine.caller_homes() == tuple(sorted({str(tmp_path), *(["/root"] if os.path.isdir("/root") else [])}))


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
@pytest.mark.parametrize("name", ["plain", "with space"])
def test_a_home_holding_a_credential_is_hidden_again_and_the_capture_runs(tmp_path, monkeypatch, name):
    home = tmp_path / name
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("SECRET_KEY\n", encoding="utf-8")
    script = home / "run.sh"
    script.write_text("cat .aws/credentials; ls -A .aws | wc -l; echo x > written || echo READ-ONLY\n",
                      encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    run = sandbox.run(["bash", str(script)], script=str(script), timeout_s=20)
    assert run.stderr_tail == ("cat: .aws/credentials: No such file or directory", "0",
                               f"{script}: line 1: written: Read-only file system", "READ-ONLY")
    assert not (home / "written").exists()


@pytest.mark.parametrize(("stage", "top"), [("/tmp/b/root", "/tmp"), ("/var/tmp/b c/root", "/var")])
def test_private_root_binds_the_stages_own_tree_first_and_detaches_its_view(monkeypatch, stage, top):
    monkeypatch.setattr(confine, "pivot_root", lambda: "/usr/sbin/pivot_root")
    s = shlex.quote(stage)
    lines = confine._private_root(stage)
    assert lines[:4] == [f"mount -t tmpfs -o mode=755,size=128m,nosuid,nodev tmpfs {s}",
                         f"mkdir {shlex.quote(stage + top)}", f"mount --rbind {top} {shlex.quote(stage + top)}",
                         f"umount -l {shlex.quote(stage + stage)}"]
    assert lines[4].splitlines() == [
        "for e in /* /.[!.]* /..?*; do", "  n=${e#/}",
        f'  if [ "$e" = {top} ] || {{ [ ! -e "$e" ] && [ ! -L "$e" ]; }}; then continue',
        f'  elif [ -L "$e" ]; then ln -s "$(readlink "$e")" {s}/"$n" || exit 1',
        f'  elif [ -d "$e" ]; then {{ mkdir {s}/"$n" && mount --rbind "$e" {s}/"$n"; }} || exit 1',
        f'  else {{ : > {s}/"$n" && mount --bind "$e" {s}/"$n"; }} || exit 1', "  fi", "done"]
    # one command a line, so `set -e` stops the set-up on a failed pivot (the host's root is never left in view)
    assert lines[5:] == [f"mkdir {s}/.rlcheck-old-root", f"cd {s}", "/usr/sbin/pivot_root . .rlcheck-old-root",
                         "umount -l /.rlcheck-old-root", "rmdir /.rlcheck-old-root"]
