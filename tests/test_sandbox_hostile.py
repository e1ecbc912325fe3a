"""Hostile launch scripts against the capture sandbox: each escape of issue 28 is a script that tries it, and the
host stays as it was (files, /etc/shadow, processes, the clock, rlcheck's memory)."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlcheck.job import capture, sandbox

needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
pytestmark = needs_sandbox
SUBMIT = "ray job submit -- python3 train.py --lr 1e-6\n"


def _script(tmp_path: Path, body: str, name: str = "hostile.sh") -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/bash\n" + body, encoding="utf-8")
    return path


def _everything(run: sandbox.Run) -> str:
    return json.dumps([run.stderr_tail, run.calls, run.limits])


def test_sandbox_remount_and_write_leave_host_files_untouched(tmp_path):
    host_file = tmp_path / "host.txt"
    host_file.write_text("host\n")
    body = (f"mount -o remount,rw / ; mount -o remount,rw {tmp_path}\n"
            f"unshare -rm sh -c 'umount /tmp; echo owned > {host_file}'\n"
            f"echo owned > {host_file}; echo owned > /usr/rlcheck-escape; echo owned > /dev/shm/rlcheck-escape\n"
            f"mount -t tmpfs none /mnt && echo MOUNTED\n" + SUBMIT)
    run = sandbox.run(["bash", str(_script(tmp_path, body))], timeout_s=20)
    assert host_file.read_text() == "host\n"
    assert not Path("/usr/rlcheck-escape").exists() and not Path("/dev/shm/rlcheck-escape").exists()
    assert "MOUNTED" not in _everything(run) and run.calls[-1][0] == "ray"


def test_sandbox_site_path_at_the_top_is_private_and_bounded(tmp_path):
    """A launch creating a cluster mount point at the top (`mkdir -p /data/ray/signals`) writes into the sandbox's
    own root (a capped tmpfs); the host's root gains nothing, its trees stay read-only, its old root is gone."""
    site = f"rlcheck-site-{tmp_path.name}"
    body = (f"mkdir -p /{site}/ray/signals && echo ok > /{site}/ray/signals/head && cat /{site}/ray/signals/head\n"
            f"head -c 200M /dev/zero > /{site}/big 2>/dev/null || echo CAPPED\n"
            "touch /usr/rlcheck-escape /etc/rlcheck-escape 2>/dev/null || echo TREES-READ-ONLY\n"
            "ls -d /.rlcheck-old-root 2>/dev/null || echo NO-OLD-ROOT\n"
            "grep -c ' / / ' /proc/self/mountinfo\n" + SUBMIT)
    run = sandbox.run(["bash", str(_script(tmp_path, body))], timeout_s=20)
    assert run.stderr_tail == ("ok", "CAPPED", "TREES-READ-ONLY", "NO-OLD-ROOT", "1")
    assert not Path(f"/{site}").exists() and not Path("/usr/rlcheck-escape").exists()
    assert run.calls[-1][0] == "ray"


def test_sandbox_private_dev_shm_does_not_see_the_host_one(tmp_path):
    marker = Path("/dev/shm") / f"rlcheck-host-{tmp_path.name}"
    marker.write_text("host")
    try:
        body = f"ls /dev/shm | grep -q rlcheck-host && echo SEEN; cat {marker} && echo SEEN; echo x > /dev/shm/own\n"
        run = sandbox.run(["bash", str(_script(tmp_path, body))], timeout_s=20)
    finally:
        marker.unlink()
    assert "SEEN" not in _everything(run) and "No such file" in _everything(run)
    assert not Path("/dev/shm/own").exists()


def test_sandbox_secrets_never_reach_the_captured_job(tmp_path):
    shadow = Path("/etc/shadow").read_text(errors="replace").strip()
    aws = tmp_path / "home" / ".aws"
    aws.mkdir(parents=True)
    (aws / "credentials").write_text("aws_secret_access_key = rlcheckHostileSecret123\n")
    body = ('ray job submit -- python3 train.py --a "$(cat /etc/shadow /etc/gshadow /proc/1/root/etc/shadow)" '
            f'--b "$(cat {aws}/credentials /root/.aws/credentials /var/run/secrets/*/* 2>&1)" --c "$(ls -a /root)"\n'
            "cat /etc/shadow; cat /etc/shadow >&2\n")
    script = _script(tmp_path, body)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "capture", str(script), "-o",
                           str(tmp_path / "job.json")], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    seen = done.stdout + done.stderr + (tmp_path / "job.json").read_text()
    assert done.returncode == 0, seen[-2000:]
    for line in [line for line in shadow.splitlines() if line] + ["rlcheckHostileSecret123"]:
        assert line not in seen


def test_sandbox_cannot_see_or_kill_a_host_process(tmp_path):
    host = subprocess.Popen(["sleep", "300"])
    try:
        body = f"kill -9 {host.pid}; /usr/bin/pkill -9 -x sleep; kill -9 -1; ls /proc | grep -c '^[0-9]' >&2\n"
        run = sandbox.run(["bash", str(_script(tmp_path, body + SUBMIT))], timeout_s=20)
        time.sleep(0.2)
        assert host.poll() is None
        assert int(next(line for line in run.stderr_tail if line.strip().isdigit())) < 10
    finally:
        host.kill()
        host.wait()


@pytest.mark.parametrize("ending", ["exit 0", "while :; do :; done"])
def test_sandbox_setsid_child_holding_stdout_dies_with_the_capture(tmp_path, ending):
    tag = f"7{os.getpid()}.5"
    body = f"setsid /usr/bin/sleep {tag} &\nsetsid bash -c 'exec /usr/bin/sleep {tag}' </dev/null &\n" + SUBMIT + ending
    started = time.monotonic()
    run = sandbox.run(["bash", str(_script(tmp_path, body + "\n"))], timeout_s=3)
    assert time.monotonic() - started < 30
    time.sleep(0.3)
    left = subprocess.run(["pgrep", "-f", f"sleep {tag}"], capture_output=True, text=True, check=False).stdout
    assert left == "" and run.calls[-1][0] == "ray"


def test_sandbox_reaches_no_host_socket(tmp_path):
    host_tmp = Path("/tmp") / f"rlcheck-sock-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as path_sock, socket.socket(socket.AF_UNIX) as abstract, \
            socket.socket() as tcp:
        path_sock.bind(str(host_tmp))
        abstract.bind(f"\0rlcheck-{os.getpid()}")
        tcp.bind(("127.0.0.1", 0))
        for s in (path_sock, abstract, tcp):
            s.listen()
        code = (f"import socket\nfor a, f in (({str(host_tmp)!r}, socket.AF_UNIX), ('\\0rlcheck-{os.getpid()}', "
                f"socket.AF_UNIX), (('127.0.0.1', {tcp.getsockname()[1]}), socket.AF_INET)):\n"
                "    s = socket.socket(f)\n    try:\n        s.connect(a); print('REACHED', a)\n"
                "    except OSError as e:\n        print('refused', e)\n")
        (tmp_path / "probe.py").write_text(code)
        run = sandbox.run(["bash", str(_script(tmp_path, f"{sys.executable} {tmp_path}/probe.py\n"))], timeout_s=20)
    host_tmp.unlink()
    assert "REACHED" not in _everything(run) and _everything(run).count("\"refused ") == 3


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("body", ["head -c 1000000000 /dev/zero | tr '\\0' x\n" + SUBMIT,
                                  'truncate -s 2G "$RLCHECK_RECORD"; '
                                  'dd if=/dev/zero of="$RLCHECK_RECORD" bs=1M count=600 2>&1 | tail -1\n' + SUBMIT])
def test_sandbox_output_and_record_floods_stay_bounded(tmp_path, body):
    before = _peak_rss_mib()
    started = time.monotonic()
    run = sandbox.run(["bash", str(_script(tmp_path, body))], timeout_s=60)
    assert time.monotonic() - started < 70
    assert _peak_rss_mib() < before + 400  # a generous bound: 1 GB of output or a 2 GB record stay out of memory
    assert run.limits or run.returncode != 0 or "File size limit" in _everything(run) or run.calls


def test_sandbox_invalid_utf8_is_read_with_replacement(tmp_path):
    script = _script(tmp_path, "printf 'bad \\xff\\xfe output\\n'; printf '\\xff\\n' >> \"$RLCHECK_RECORD\"\n"
                               "ray job submit -- python3 train.py --name $'\\xff\\xfe'\nexit 1\n")
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "capture", str(script)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                          timeout=120, check=False)
    assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, done.stderr[-2000:]
    job = capture.capture(script)
    assert job.argv[-1] == "\ufffd\ufffd"


def test_sandbox_runs_from_a_venv_reached_through_a_linked_folder_under_tmp(tmp_path):
    """rlcheck started as /tmp/x/.venv/bin/python where .venv is a link: /tmp is private in the sandbox, so the
    stand-ins start the interpreter by its directory's real path (and keep the venv)."""
    venv = Path(sys.executable).parent.parent
    (tmp_path / "clone").mkdir()
    (tmp_path / "clone" / ".venv").symlink_to(venv)
    python = tmp_path / "clone" / ".venv" / "bin" / Path(sys.executable).name
    (tmp_path / "scripts").mkdir()
    script = _script(tmp_path / "scripts", SUBMIT)  # its folder is shown, the clone beside it is not
    child = ("import sys; from rlcheck.job import sandbox; run = sandbox.run(['bash', sys.argv[1]], timeout_s=20); "
             "print(run.returncode, run.calls)")
    out = subprocess.run([str(python), "-c", child, str(script)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(sandbox.__file__).resolve().parents[2])},
                         check=True)
    assert out.stdout.strip() == "0 (('ray', ('job', 'submit', '--', 'python3', 'train.py', '--lr', '1e-6')),)"
