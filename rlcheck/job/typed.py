"""Reading untrusted documents (job JSON, RayJob YAML) by type: a wrong type is a JobFormatError naming the field,
never a crash; YAML is size-bound and refused when it uses aliases (an expansion bomb needs them)."""

from __future__ import annotations

from typing import Any

from rlcheck.job.submit import JobFormatError

YAML_CAP_BYTES = 1 << 20
"""A RayJob (or its runtimeEnvYAML) larger than this is refused: manifests are kilobytes."""


def get(doc: Any, key: str, kind: type | tuple[type, ...], where: str, *, default: Any = None) -> Any:
    """doc[key] when it is of kind (None or absent: default); JobFormatError naming where.key otherwise."""
    if not isinstance(doc, dict):
        raise JobFormatError(f"{where}: expected a mapping, found {type(doc).__name__}")
    value = doc.get(key)
    if value is None:
        return default
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise JobFormatError(f"{where}.{key}={value!r}: expected {_names(kind)}")
    if not isinstance(value, kind):
        raise JobFormatError(f"{where}.{key}: expected {_names(kind)}, found {type(value).__name__}")
    return value


def strings(doc: Any, key: str, where: str, *, required: bool = False) -> list[str]:
    """doc[key] as a list of strings (a string is refused, not split into characters)."""
    value = get(doc, key, list, where, default=None)
    if value is None:
        if required:
            raise JobFormatError(f"{where}.{key}: required, a non-empty list of strings")
        return []
    bad = next((i for i, t in enumerate(value) if not isinstance(t, str)), None)
    if bad is not None or (required and not value):
        raise JobFormatError(f"{where}.{key}: a non-empty list of strings (item {bad}: "
                             f"{type(value[bad]).__name__ if bad is not None else 'none'})")
    return value


def string_map(doc: Any, key: str, where: str) -> dict[str, str]:
    value = get(doc, key, dict, where, default={})
    bad = next((k for k, v in value.items() if not isinstance(k, str) or not isinstance(v, (str, int, float))), None)
    if bad is not None:
        raise JobFormatError(f"{where}.{key}[{bad!r}]: expected a string value, found {type(value[bad]).__name__}")
    return {k: str(v) for k, v in value.items()}


def count(doc: Any, key: str, where: str, *, default: int | None = None) -> int | None:
    """A positive count (an int, or a string of digits as Kubernetes quantities are written)."""
    value = get(doc, key, (int, str), where, default=default)
    if isinstance(value, str):
        # ASCII digits only: str.isdigit() also takes superscripts ('²'), which int() refuses
        if not (value.strip().isascii() and value.strip().isdigit()):
            raise JobFormatError(f"{where}.{key}={value!r}: expected a whole number")
        value = int(value)
    if value is not None and value < 0:
        raise JobFormatError(f"{where}.{key}={value}: expected >= 0")
    return value


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({"dict": "a mapping", "list": "a list", "str": "a string", "int": "an integer"}.get(
        k.__name__, k.__name__) for k in kinds)


def load_yaml_all(text: str, source: str, what: str) -> list[Any]:
    """Every document of a YAML text; JobFormatError when it is too large, uses an alias or is not YAML."""
    try:
        import yaml
    except ImportError as exc:
        raise JobFormatError(f"{source}: reading a RayJob YAML needs PyYAML, which is not installed here "
                             f"(pip install pyyaml; or give the job as its launch script)") from exc
    if len(text.encode("utf-8", errors="replace")) > YAML_CAP_BYTES:
        raise JobFormatError(f"{source}: {what} is over {YAML_CAP_BYTES >> 20} MiB; a manifest is kilobytes")
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise JobFormatError(f"{source}: {what} uses a YAML alias (*{event.anchor}); rlcheck reads no "
                                     f"aliases (a few lines of them can expand to gigabytes): write the values out")
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise JobFormatError(f"{source}: {what} is not valid YAML ({exc})") from exc
