"""Rule table for the YAML output (rlcheck.deploy.yaml_text): keys kept in the order they were built, long lines not
folded at PyYAML's default 80 columns, several documents in one stream, and without PyYAML one line naming what to
install (never a traceback)."""

from __future__ import annotations

import sys

import pytest
import yaml

from rlcheck.deploy import yaml_text

DOC = {"zeta": 1, "alpha": {"b": [1, 2], "a": "x" * 100}, "mid": None}


def test_dump_keeps_key_order_and_long_values_unfolded():
    text = yaml_text.dump(DOC)
    assert text == f"zeta: 1\nalpha:\n  b:\n  - 1\n  - 2\n  a: {'x' * 100}\nmid: null\n"
    assert yaml.safe_load(text) == DOC


@pytest.mark.parametrize(("a_count", "text"), [
    # "k: " and the a's, then " b" ends at column 120 (kept whole) or 121 (the next space breaks the line)
    (115, f"k: {'a' * 115} b c\n"), (116, f"k: {'a' * 116} b\n  c\n"),
])
@pytest.mark.parametrize("many", [False, True])
def test_dump_folds_only_past_120_columns(a_count, text, many):
    value = f"{'a' * a_count} b c"
    got = yaml_text.dump_all([{"k": value}]) if many else yaml_text.dump({"k": value})
    assert got == text and yaml.safe_load(got) == {"k": value}


def test_dump_all_writes_each_document_in_order():
    text = yaml_text.dump_all([{"b": 1, "a": 2}, {"kind": "x" * 100}])
    assert text == f"b: 1\na: 2\n---\nkind: {'x' * 100}\n"
    assert list(yaml.safe_load_all(text)) == [{"b": 1, "a": 2}, {"kind": "x" * 100}]


def test_dump_refuses_what_safe_yaml_cannot_write():
    with pytest.raises(yaml.representer.RepresenterError):
        yaml_text.dump({"k": object()})


@pytest.mark.parametrize("call", [lambda: yaml_text.dump(DOC), lambda: yaml_text.dump_all([DOC])])
def test_without_pyyaml_one_line_names_what_to_install(monkeypatch, call):
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml raises ImportError
    with pytest.raises(yaml_text.YamlMissing) as raised:
        call()
    assert str(raised.value) == ("--format yaml needs PyYAML, which is not installed here: pip install "
                                 "'rlcheck[k8s]' (or: pip install PyYAML), or use --format json")
    assert isinstance(raised.value, RuntimeError) and isinstance(raised.value.__cause__, ImportError)
