"""YAML output for manifests, with PyYAML optional: JSON needs nothing, YAML needs the `k8s` extra."""

from __future__ import annotations

from typing import Any

INSTALL_HINT = "pip install 'rlcheck[k8s]' (or: pip install PyYAML), or use --format json"


class YamlMissing(RuntimeError):
    """--format yaml asked for in an environment without PyYAML; the message says what to install."""


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:  # a training image without PyYAML: one line, never a traceback
        raise YamlMissing(f"--format yaml needs PyYAML, which is not installed here: {INSTALL_HINT}") from exc
    return yaml


def dump(doc: Any) -> str:
    return dump_all([doc])  # PyYAML's safe_dump is safe_dump_all of the one document


def dump_all(docs: list[Any]) -> str:
    return str(_yaml().safe_dump_all(docs, sort_keys=False, width=120))
