"""Rule table for the side directories a reproducer runs another version of a package from (rlcheck.repro.sidecar):
one is found only when set-up finished it (its .done marker), under $RLCHECK_SIDECAR_DIR or the checkout's .sidecar,
and the UNKNOWN verdict's whole words when it is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

import rlcheck
from rlcheck.repro import sidecar


def test_the_default_root_is_the_checkouts_sidecar_folder():
    assert sidecar.DEFAULT_DIR == Path(rlcheck.__file__).resolve().parents[1] / ".sidecar"


@pytest.mark.parametrize(("made", "done", "found"), [(True, True, True), (True, False, False), (False, False, False)])
def test_a_side_directory_is_found_only_once_set_up_finished_it(monkeypatch, tmp_path, made, done, found):
    monkeypatch.setenv("RLCHECK_SIDECAR_DIR", str(tmp_path))
    if made:
        (tmp_path / "uvicorn-0.44").mkdir()
    if done:
        (tmp_path / "uvicorn-0.44" / ".done").write_text("")
    assert sidecar.path("uvicorn-0.44") == (tmp_path / "uvicorn-0.44" if found else None)


def test_without_the_variable_the_checkouts_folder_is_looked_in(monkeypatch, tmp_path):
    monkeypatch.delenv("RLCHECK_SIDECAR_DIR", raising=False)
    monkeypatch.setattr(sidecar, "DEFAULT_DIR", tmp_path)
    (tmp_path / "numpy2").mkdir()
    (tmp_path / "numpy2" / ".done").write_text("")
    assert sidecar.path("numpy2") == tmp_path / "numpy2" and sidecar.path("numpy1") is None
    assert sidecar.missing("numpy1") == (f"side directory 'numpy1' not found under {tmp_path}: run ./run setup "
                                         f"(scripts/setup-sidecars.sh)")


def test_missing_names_the_root_it_looked_in(monkeypatch):
    monkeypatch.setenv("RLCHECK_SIDECAR_DIR", "/opt/side")
    assert sidecar.missing("uvicorn-0.44") == ("side directory 'uvicorn-0.44' not found under /opt/side: run ./run "
                                               "setup (scripts/setup-sidecars.sh)")
