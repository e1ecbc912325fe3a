"""Type checks for the TOML data files (catalogue, hardware profiles), run when they load.

TOML has its own types; a value of the wrong one (`title = 5`, `gpus_per_node = 8.5`, `[failure]` where
`[[failure]]` was meant) must be refused at load, naming the field, what it got and what is allowed,
before any code trips over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KINDS = ("str", "int", "number", "table", "list[str]", "list[table]", "table[str]", "table[number]")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def conforms(value: object, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return _is_number(value)
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    if kind == "table":
        return isinstance(value, dict)
    if kind == "list[table]":
        return isinstance(value, list) and all(isinstance(x, dict) for x in value)
    if kind == "table[str]":
        return isinstance(value, dict) and all(isinstance(x, str) for x in value.values())
    if kind == "table[number]":
        return isinstance(value, dict) and all(_is_number(x) for x in value.values())
    raise ValueError(f"kind={kind!r}: one of {', '.join(KINDS)}")


_SAY = {"table": "a table", "str": "a string", "int": "a whole number", "number": "a number",
        "list[str]": "a list of strings",
        "list[table]": "an array of tables ([[...]])", "table[str]": "a table of strings",
        "table[number]": "a table of numbers"}
_SAY_ELEMENT = {"list[str]": "a string", "list[table]": "a table", "table[str]": "a string",
                "table[number]": "a number"}


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_fields(raw: Mapping[str, Any], spec: Mapping[str, str], required: tuple[str, ...] = ()) -> None:
    """Raise ValueError for an unknown key, a missing required one, or a value of the wrong type."""
    unknown = sorted(set(raw) - set(spec))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}: allowed are {', '.join(spec)}")
    for key, kind in spec.items():
        if key in raw and not conforms(raw[key], kind):
            where = _where(key, raw[key], kind)
            say = _SAY_ELEMENT[kind] if where.startswith((f"{key}.", f"{key}[")) else _SAY[kind]
            raise ValueError(f"{where}: must be {say}")
    missing = [k for k in required if k not in raw]
    if missing:
        raise ValueError(f"missing field(s) {missing}")


def _where(key: str, value: object, kind: str) -> str:
    """The exact element that is wrong: 'source.hbm_gib=5' rather than the whole table. Only a value of the kind's own
    container is looked into: a table where a list was meant (`[failure]` for `[[failure]]`) is wrong as a whole."""
    container, _, element = kind.partition("[")
    element = element.rstrip("]")
    if container == "table" and isinstance(value, dict) and element:
        bad = next((k for k, v in value.items() if not conforms(v, _ELEMENT[element])), None)
        if bad is not None:
            return f"{key}.{bad}={_shown(value[bad])}"
    if container == "list" and isinstance(value, list) and element:
        bad_i = next((i for i, v in enumerate(value) if not conforms(v, _ELEMENT[element])), None)
        if bad_i is not None:
            return f"{key}[{bad_i}]={_shown(value[bad_i])}"
    return f"{key}={_shown(value)}"


_ELEMENT = {"str": "str", "number": "number", "table": "table"}


def refuse_unknown_keys(data: Mapping[str, Any], fields: Any, what: str) -> None:
    """A recorded dataclass reading (a node's observation, an inventory) with a key the dataclass lacks is refused,
    naming the keys: a reading from a newer rlcheck must not be judged as if the fact were absent."""
    unknown = set(data) - {f.name for f in fields}
    if unknown:
        raise ValueError(f"{what} keys {sorted(unknown)} are not known to this rlcheck")
