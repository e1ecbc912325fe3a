"""Rule table of the folders a capture shows a launch (--job-show, rlcheck.job.shown): which are refused and why, and
what inside one is hidden again; the set-up lines that show one (rlcheck.job.confine._show) and where they stand."""

from __future__ import annotations

import os
import shlex

import pytest

from rlcheck.job import confine, sandbox, shown
from rlcheck.job.confine import Layout

ALLOWED = ("allowed: an existing directory that is not / or a top-level system tree, lies in no credential place and "
           "holds none; credential files in it (.ssh, .aws, .netrc, ...) are hidden from the script")


@pytest.fixture
def site(tmp_path, monkeypatch):
    """tmp holding a home (h, with credentials), a folder of models, a secret tree (run) and file (shadow) of the
    sandbox's own lists, a home tree (homes) and links to each."""
    for d in ("h/.aws", "h/.config/gcloud", "h/models", "models/m/sub/.ssh", "run/secrets", "homes/bob", "etc"):
        (tmp_path / d).mkdir(parents=True)
    for f in ("h/.aws/credentials", "etc/shadow", "models/m/config.json", "models/m/sub/.ssh/id_rsa", "file"):
        (tmp_path / f).write_text("x\n", encoding="utf-8")
    for link, to in (("to_aws", "h/.aws"), ("to_models", "models/m"), ("to_run", "run/secrets"), ("gone", "nowhere"),
                     ("to_file", "file")):
        (tmp_path / link).symlink_to(tmp_path / to)
    monkeypatch.setattr(confine, "HIDDEN_DIRS", (str(tmp_path / "homes"), str(tmp_path / "run"), "/nonexistent-x"))
    monkeypatch.setattr(confine, "HIDDEN_FILES", (str(tmp_path / "etc/shadow"), "/nonexistent-y"))
    monkeypatch.setattr(shown, "HOME_TREES", (str(tmp_path / "homes"),))
    return tmp_path


@pytest.mark.parametrize(("given", "why"), [
    # what is not a folder
    ("nowhere", "{t}/nowhere: does not exist"),
    ("gone", "{t}/gone (really {t}/nowhere): does not exist"),
    ("file", "{t}/file: is not a directory"),
    ("to_file", "{t}/to_file (really {t}/file): is not a directory"),
    # the root and the system trees, and anything in the kernel's
    ("/", "/: is / or a system tree"), ("/etc", "/etc: is / or a system tree"), ("/usr", "/usr: is / or a system tree"),
    ("/tmp", "/tmp: is / or a system tree"), ("/var", "/var: is / or a system tree"),
    ("/proc/self", "/proc/self (really /proc/{pid}): is / or a system tree"),
    ("/dev/shm", "/dev/shm: is / or a system tree"), ("/sys/kernel", "/sys/kernel: is / or a system tree"),
    # a credential place by name, at any depth, or through a link
    ("h/.aws", "{t}/h/.aws: is or lies in a credential place (.aws)"),
    ("h/.config/gcloud", "{t}/h/.config/gcloud: is or lies in a credential place (.config/gcloud)"),
    ("models/m/sub/.ssh", "{t}/models/m/sub/.ssh: is or lies in a credential place (.ssh)"),
    ("to_aws", "{t}/to_aws (really {t}/h/.aws): is or lies in a credential place (.aws)"),
    # a hidden tree that is no home: in it, it, or holding it; a hidden file held
    ("run", "{t}/run: is or lies in {t}/run, a hidden credential place"),
    ("to_run", "{t}/to_run (really {t}/run/secrets): is or lies in {t}/run, a hidden credential place"),
    (".", "{t}: holds {t}/run, a hidden credential place"),
    ("etc", "{t}/etc: holds {t}/etc/shadow, a hidden credential place"),
])
def test_show_refuses_a_folder_naming_why_and_what_is_allowed(site, monkeypatch, given, why):
    monkeypatch.chdir(site)
    with pytest.raises(ValueError) as exc:
        shown.check([given if given.startswith("/") else str(site / given).removesuffix("/.")])
    assert str(exc.value) == f"--job-show {why.format(t=site, pid=os.getpid())}; {ALLOWED}"


def test_show_takes_folders_by_real_path_once_each_in_order(site):
    # a home tree itself (its credential places are hidden inside), a folder in a home, one through a link
    given = [str(site / "to_models"), str(site / "homes"), str(site / "h/models"), str(site / "models/m")]
    assert shown.check(given) == (str(site / "models/m"), str(site / "homes"), str(site / "h/models"))
    assert shown.check([]) == ()


def test_show_of_a_hidden_tree_that_is_no_home_is_refused_a_home_tree_is_not(site, monkeypatch):
    monkeypatch.setattr(shown, "HOME_TREES", ())
    with pytest.raises(ValueError, match=r"homes: is or lies in .*homes, a hidden credential place"):
        shown.check([str(site / "homes")])
    assert shown.secret_trees() == sorted([str(site / "homes"), str(site / "run"), "/nonexistent-x"])


def test_show_refuses_a_folder_holding_more_than_it_can_look_through(site, monkeypatch):
    monkeypatch.setattr(shown, "WALK_CAP", 3)
    assert shown.check([str(site / "h/models")]) == (str(site / "h/models"),)  # nothing in it
    with pytest.raises(ValueError) as exc:
        shown.check([str(site / "models")])  # m, sub, config.json, .ssh: 4 entries
    assert str(exc.value) == (f"--job-show {site}/models: holds over 3 entries, too many to look through for "
                              f"credential files; show the folder the launch reads (the model's, the dataset's)")


def test_secrets_inside_are_every_credential_name_at_any_depth_homes_and_linked_places(site):
    m = site / "models/m"
    for d in ("deep/a/.aws/x", ".config/gcloud", ".config/other", ".ray", ".docker2", "home_in/.kube"):
        (m / d).mkdir(parents=True)
    for f in (".netrc", "deep/.git-credentials", "not.netrc", ".netrc.bak"):
        (m / f).write_text("x\n", encoding="utf-8")
    (m / ".pgpass").symlink_to(site / "file")  # a link named as a credential: hidden through it
    (m / ".npmrc").symlink_to(site / "nowhere")  # leads nowhere: nothing to hide
    (m / "link_dir").symlink_to(site / "h")  # a link to a directory is not walked (it is judged where it leads)
    got = shown.secrets_inside(str(m), homes=[str(m / "home_in"), str(site / "h")])
    assert got == tuple(str(m / p) for p in (".config/gcloud", ".netrc", ".pgpass", ".ray", "deep/.git-credentials",
                                             "deep/a/.aws", "home_in", "sub/.ssh"))


def test_secrets_inside_a_home_shown_are_its_credentials(site):
    assert shown.secrets_inside(str(site / "h"), homes=[str(site / "h")]) == (str(site / "h/.aws"),
                                                                             str(site / "h/.config/gcloud"))
    # a folder in a home: only what lies in it
    assert shown.secrets_inside(str(site / "h/models"), homes=[str(site / "h")]) == ()


def test_secrets_inside_a_home_tree_shown_are_the_homes_in_it(site):
    (site / "homes/bob/.ssh").mkdir()
    assert shown.secrets_inside(str(site / "homes"), homes=[str(site / "homes/bob")]) == (str(site / "homes/bob"),)


def test_secrets_inside_do_not_walk_another_file_system(site, monkeypatch):
    m = str(site / "models/m")
    real_lstat = os.lstat

    class Other:
        st_dev = -1

    monkeypatch.setattr(shown.os, "lstat", lambda p: Other() if p == f"{m}/sub" else real_lstat(p))
    assert shown.secrets_inside(m) == ()


def test_show_lines_overlay_the_folder_from_its_descriptor_then_hide_its_credentials(tmp_path):
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".netrc").write_text("", encoding="utf-8")
    folder = f"{tmp_path}/my models"
    q = shlex.quote(folder)
    assert confine._show(folder, [f"{tmp_path}/.aws", f"{tmp_path}/.netrc"], 13, "/b/show0") == [
        f"mkdir -p {q} /b/show0", "mount -t tmpfs -o mode=700,size=128m,nosuid,nodev tmpfs /b/show0",
        "mkdir /b/show0/upper /b/show0/work",
        f"mount -t overlay overlay -o lowerdir=/proc/self/fd/13,upperdir=/b/show0/upper,workdir=/b/show0/work {q}",
        "exec 13<&-",
        f"[ ! -e {tmp_path}/.aws ] || mount -t tmpfs -o mode=700,size=1m,nosuid,nodev tmpfs {tmp_path}/.aws",
        f'[ ! -e {tmp_path}/.netrc ] || mount --bind -o ro "$EMPTY" {tmp_path}/.netrc']


def test_prologue_holds_each_folder_before_hiding_shows_it_after_the_kept_paths_and_leaves_it_writable(
        tmp_path, monkeypatch):
    monkeypatch.setattr(confine, "HIDDEN_DIRS", ())
    monkeypatch.setattr(confine, "HIDDEN_FILES", ())
    monkeypatch.setattr(confine.glob, "glob", lambda p: [])
    t = str(tmp_path)
    for d in ("base", "w", "a", "b"):
        (tmp_path / d).mkdir()
    plain = confine.prologue(Layout(base=f"{t}/base", home=f"{t}/h", record_dir=f"{t}/r", cwd=f"{t}/w", keep=()))
    layout = Layout(base=f"{t}/base", home=f"{t}/h", record_dir=f"{t}/r", cwd=f"{t}/w", keep=(),
                    shown=((f"{t}/a", ()), (f"{t}/b", (f"{t}/b/.ssh",))))
    lines = confine.prologue(layout).splitlines()
    # rlcheck's folder and the start directory kept (fds 10, 11); the folders held next, before /tmp is covered
    at = lines.index(f"exec 12<{t}/a")
    assert lines[at + 1] == f"exec 13<{t}/b" and lines.index("mount -t tmpfs -o mode=1777,size=128m,nosuid,nodev "
                                                             "tmpfs /tmp") > at + 1
    show = [*confine._show(f"{t}/a", (), 12, f"{t}/base/show0"),
            *confine._show(f"{t}/b", (f"{t}/b/.ssh",), 13, f"{t}/base/show1")]
    start = lines.index(show[0])
    assert lines[start:start + len(show)] == show
    assert lines[start - 1] == "exec 11<&-"  # after the last kept path is bound back
    assert lines[start + len(show)] == f"mount -t tmpfs -o mode=700,size=128m,nosuid,nodev tmpfs {t}/h"
    assert confine._read_only_loop(["/", "/tmp", "/dev/shm", f"{t}/h", f"{t}/r", f"{t}/base/ovl", f"{t}/a",
                                    f"{t}/base/show0", f"{t}/b", f"{t}/base/show1"], f"{t}/w") in "\n".join(lines)
    assert not any("overlay" in line and "lowerdir=/proc" in line for line in plain.splitlines())


def test_run_refuses_a_folder_holding_rlchecks_own_folder_for_the_run(tmp_path, monkeypatch):
    (tmp_path / "t").mkdir()
    monkeypatch.setattr(sandbox, "available", lambda: "")
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path / "t"))
    monkeypatch.setattr(sandbox, "_run", lambda *a: pytest.fail("ran"))
    with pytest.raises(ValueError) as exc:
        sandbox.run(["true"], show=[str(tmp_path)])
    assert str(exc.value).startswith(f"--job-show {tmp_path}: holds rlcheck's own folder for the run ({tmp_path}/t/"
                                     f"rlcheck-capture-")
    assert str(exc.value).endswith(f"); {ALLOWED}")
