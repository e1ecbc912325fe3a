"""Hostile launch scripts against a folder the capture sandbox shows (--job-show): the script reads and rewrites it,
the host folder stays as it was, and no credential placed in it or reached through a link in it can be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck.job import capture, sandbox

pytestmark = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
SECRET = "AKIA-rlcheck-shown-secret\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A model folder holding a config.json, credentials of every kind and links to secrets outside it; HOME a home
    whose .ssh a link in the folder leads to."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET, encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    models = tmp_path / "models"
    for d in (".ssh", "sub/.aws"):
        (models / d).mkdir(parents=True)
    for f in (".ssh/id_rsa", "sub/.aws/credentials", ".netrc"):
        (models / f).write_text(SECRET, encoding="utf-8")
    (models / "config.json").write_text('{"num_hidden_layers": 2}\n', encoding="utf-8")
    (models / "shadow").symlink_to("/etc/shadow")
    (models / "home_ssh").symlink_to(home / ".ssh")
    (models / ".docker").symlink_to(home / ".ssh")  # named as a credential, leading where the sandbox shows nothing
    (models / "kube_files").mkdir()
    (models / "kube_files" / "config").write_text(SECRET, encoding="utf-8")
    (models / ".kube").symlink_to(models / "kube_files")  # named as a credential: hidden where it leads
    monkeypatch.chdir(tmp_path)
    return models


def _host(models: Path) -> dict[str, str]:
    return {str(p.relative_to(models)): p.read_text(encoding="utf-8") if p.is_file() else "dir"
            for p in sorted(models.rglob("*")) if not p.is_symlink()}


def test_show_lets_the_script_rewrite_privately_and_read_no_secret(folder, tmp_path):
    before = _host(folder)
    script = tmp_path / "hostile.sh"
    d = str(folder)
    script.write_text(
        f"sed -i 's/2/3/' {d}/config.json && cat {d}/config.json\n"
        f"echo \"secret bytes: $(cat {d}/.ssh/id_rsa {d}/sub/.aws/credentials {d}/.netrc {d}/shadow "
        f"{d}/home_ssh/id_rsa {d}/.docker/id_rsa {d}/.kube/config {d}/kube_files/config 2>/dev/null | wc -c) "
        f"listed: $(find {d}/.ssh {d}/sub/.aws {d}/home_ssh/ {d}/.docker/ {d}/kube_files -mindepth 1 2>/dev/null "
        f"| wc -l)\"\n"
        f"echo x > {d}/new && rm {d}/config.json && echo WRITES-PRIVATE\n"
        f"head -c 200M /dev/zero > {d}/big 2>/dev/null || echo CAPPED\n"
        f"umount {d}/.ssh 2>/dev/null || umount -l {d} 2>/dev/null || echo MOUNTS-KEPT\n"
        "ray job submit -- python3 train.py\n", encoding="utf-8")
    run = sandbox.run(["bash", str(script)], script=str(script), show=[d], timeout_s=20)
    assert run.stderr_tail == ('{"num_hidden_layers": 3}', "secret bytes: 0 listed: 0", "WRITES-PRIVATE", "CAPPED",
                               "MOUNTS-KEPT")
    assert run.calls[-1] == ("ray", ("job", "submit", "--", "python3", "train.py"))
    assert _host(folder) == before and before["config.json"] == '{"num_hidden_layers": 2}\n'
    assert before[".ssh/id_rsa"] == SECRET  # the credentials were there to read


def test_capture_with_a_folder_shown_reads_the_config_the_launch_rewrites(folder, tmp_path, monkeypatch):
    (tmp_path / "scripts").mkdir()
    monkeypatch.chdir(tmp_path / "scripts")  # the folder lies beside, not in, what the sandbox keeps in view
    script = tmp_path / "scripts" / "launch.sh"
    script.write_text(f"sed -i 's/2/4/' {folder}/config.json\n"
                      f"L=$(sed 's/[^0-9]//g' {folder}/config.json)\n"
                      "ray job submit -- python3 train.py --num-layers $L\n", encoding="utf-8")
    job = capture.capture(script, show=[str(folder)])
    assert job.argv == ("python3", "train.py", "--num-layers", "4")
    assert job.findings == (f"captured with {folder} shown at its own path (a private overlay: the host folder "
                            f"unchanged, what the script wrote there not kept, credential files in it hidden)",)
    assert (folder / "config.json").read_text(encoding="utf-8") == '{"num_hidden_layers": 2}\n'
