"""JSON as session files hold it: written like PraisonAI writes it (any depth, lone
surrogates kept as escapes) and copied without recursion."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

_DEFAULT_ERROR = "Object of type {} is not JSON serializable"
# The deepest nesting :func:`dumps_json` writes: what the JSON parsers here can read back
# (orjson stops at 1024 levels, the standard library near the recursion limit). Deeper
# data would make a file nobody can load, and indented text grows with depth squared.
MAX_JSON_DEPTH = 1000


def _float_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float_text(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _dumps_iterative(
    value: Any, indent: int | None, sort_keys: bool, default: Callable[[Any], Any] | None
) -> str:
    """``json.dumps(value, indent=..., sort_keys=..., ensure_ascii=False, default=...)``
    without recursion: the same text for any depth of nesting."""
    pad = None if indent is None else " " * indent
    separator = ", " if pad is None else ","
    parts: list[str] = []
    # frame: [iterator, is_dict, level, first, id]
    stack: list[list[Any]] = []
    markers: set[int] = set()

    def emit(item: Any) -> None:
        while True:
            if isinstance(item, str):
                parts.append(encode_basestring(item))
            elif item is None:
                parts.append("null")
            elif item is True:
                parts.append("true")
            elif item is False:
                parts.append("false")
            elif isinstance(item, int):
                parts.append(int.__repr__(item))
            elif isinstance(item, float):
                parts.append(_float_text(item))
            elif isinstance(item, (list, tuple, dict)):
                if not item:
                    parts.append("{}" if isinstance(item, dict) else "[]")
                    return
                if id(item) in markers:
                    raise ValueError("Circular reference detected")
                markers.add(id(item))
                is_dict = isinstance(item, dict)
                it: Any
                if isinstance(item, dict):
                    it = iter(sorted(item.items()) if sort_keys else item.items())
                else:
                    it = iter(item)
                level = len(stack) + 1
                if level > MAX_JSON_DEPTH:
                    raise RecursionError(f"nested more than {MAX_JSON_DEPTH} levels deep")
                parts.append("{" if is_dict else "[")
                if pad is not None:
                    parts.append("\n" + pad * level)
                stack.append([it, is_dict, level, True, id(item)])
            else:
                if default is None:
                    raise TypeError(_DEFAULT_ERROR.format(type(item).__name__))
                item = default(item)
                continue
            return

    emit(value)
    while stack:
        frame = stack[-1]
        try:
            item = next(frame[0])
        except StopIteration:
            stack.pop()
            markers.discard(frame[4])
            if pad is not None:
                parts.append("\n" + pad * (frame[2] - 1))
            parts.append("}" if frame[1] else "]")
            continue
        if frame[3]:
            frame[3] = False
        else:
            parts.append(separator if pad is None else separator + "\n" + pad * frame[2])
        if frame[1]:
            parts.append(encode_basestring(_key_text(item[0])))
            parts.append(": ")
            emit(item[1])
        else:
            emit(item)
    return "".join(parts)


def dumps_json(
    value: Any,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(..., ensure_ascii=False)`` that works at any depth of nesting.

    The standard encoder runs first; only when it hits the recursion limit (content nested
    hundreds of levels deep) is the same text produced without recursion, up to
    :data:`MAX_JSON_DEPTH` levels (``RecursionError`` beyond). Raises what ``json.dumps``
    raises otherwise (``TypeError``, ``ValueError``).
    """
    try:
        return json.dumps(
            value, indent=indent, sort_keys=sort_keys, ensure_ascii=False, default=default
        )
    except RecursionError:
        return _dumps_iterative(value, indent, sort_keys, default)


_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def json_utf8(text: str) -> bytes:
    """JSON text (from :func:`dumps_json`) as UTF-8 bytes, lone surrogates kept as escapes.

    A string holding a lone surrogate (``"\\ud83d"``, half an emoji) cannot be encoded as
    UTF-8; outside strings JSON text is ASCII, so each such character is written back as
    its own ``\\udXXX`` escape: the file stays valid UTF-8 and loads to the same value.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode(
            "utf-8"
        )


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars) at any depth of nesting.

    Dicts and lists (and tuples, copied as lists) are copied; every other value is shared
    (they are immutable for JSON data). Unlike ``copy.deepcopy`` it never recurses.
    """
    if not isinstance(value, (dict, list, tuple)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    todo: list[tuple[Any, Any]] = [(value, root)]
    while todo:
        source, target = todo.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                if isinstance(item, (dict, list, tuple)):
                    child: Any = {} if isinstance(item, dict) else []
                    todo.append((item, child))
                    target[key] = child
                else:
                    target[key] = item
        else:
            for item in source:
                if isinstance(item, (dict, list, tuple)):
                    child = {} if isinstance(item, dict) else []
                    todo.append((item, child))
                    target.append(child)
                else:
                    target.append(item)
    return root
