"""Rule table for what kind a test item is (rlcheck.plugin.items): a check, a reproducer, an e2e case or an ordinary
test, from the first folder of its node id, and a check wherever pytest's rootdir puts it when it is one of the checks
shipped in the package (the report's sections and the GO / NO-GO decision count checks only)."""

from __future__ import annotations

import types

import pytest

from rlcheck.plugin import items


@pytest.mark.parametrize(("nodeid", "kind"), [
    ("checks/test_image.py::test_image_numpy_major", "check"),
    ("checks/cluster/test_nodes.py::test_cluster_gpus[h200]", "check"),
    ("reproducers/test_repro_tms.py::test_repro_tms_preload", "reproducer"),
    ("testcases/test_e2e.py::test_e2e_colocated", "case"),
    ("tests/test_plugin.py::test_x", "test"),
    ("test_top.py::test_x", "test"),
    ("checks", "check"),
    ("checksum/test_x.py::t", "test"),  # the folder's whole name, not its start
    ("sub/checks/test_x.py::t", "test"),  # the first folder only
    ("Checks/test_x.py::t", "test"),
    ("", "test"),
])
def test_kind_of_a_node_id_is_its_first_folders(nodeid, kind):
    assert items.kind_of(nodeid) == kind


def _item(path, nodeid):
    return types.SimpleNamespace(path=path, nodeid=nodeid)


@pytest.mark.parametrize(("path", "nodeid", "kind"), [
    # a shipped check run from site-packages: its node id is relative to wherever pytest's rootdir is
    (items.PACKAGED_CHECKS / "test_image.py", "site-packages/rlcheck/checks/test_image.py::test_image", "check"),
    (items.PACKAGED_CHECKS / "test_image.py", "test_image.py::test_image", "check"),
    # a folder below the shipped checks or beside them is not one of them: the node id decides
    (items.PACKAGED_CHECKS / "sub" / "test_x.py", "sub/test_x.py::t", "test"),
    (items.PACKAGED_CHECKS.parent / "test_x.py", "reproducers/test_x.py::t", "reproducer"),
    (items.PACKAGED_CHECKS.parent / "test_x.py", "checks/test_x.py::t", "check"),
])
def test_kind_of_an_item_knows_the_packaged_checks_else_reads_its_node_id(path, nodeid, kind):
    assert items.kind_of_item(_item(path, nodeid)) == kind  # type: ignore[arg-type]


def test_kind_of_an_item_resolves_a_path_that_reaches_the_packaged_checks_another_way(tmp_path):
    link = tmp_path / "installed"
    link.symlink_to(items.PACKAGED_CHECKS.parent)
    assert items.kind_of_item(_item(link / "checks" / "test_image.py", "test_image.py::t")) == "check"  # type: ignore[arg-type]
