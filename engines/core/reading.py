"""Reading a user's file without trusting it: one bounded reader and one tree check for every reader.

Why each rule: ``stat`` lies for devices and ``/proc`` (``/dev/zero`` says 0 bytes and never ends), so
a read stops at the limit plus one byte whatever the size says; ``open()`` on a named pipe blocks
until a writer comes, so the file is opened non-blocking and refused unless it is a regular file;
Python's parsers raise ``RecursionError`` on deep nesting and ``ValueError`` on a 5,000-digit
integer (the int-conversion limit, PEP 651 / CVE-2020-10735), and a YAML alias can stand for a
billion values (the "billion laughs") or for itself, so every parsed tree is sized and its depth
checked before anything walks it recursively. Every refusal is a :class:`ValidationError`.
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

from engines.core.errors import ValidationError

MAX_DEPTH = 64
"""Nesting deeper than any file the app reads (a Kubernetes object is about 15 deep); recursive code
below the limit stays far from Python's recursion limit."""
MAX_NODES = 2_000_000
"""Values a parsed document may hold once aliases are expanded (a 64 MiB dump holds about that many)."""
_CHUNK = 1 << 20

Fail = Callable[[str, str], Exception]


class FileRefused(ValidationError):
    """A file that was not read: ``name`` is the file, ``why`` the reason, in words."""

    def __init__(self, field: str, name: str, why: str) -> None:
        self.name, self.why = name, why
        super().__init__(field, f"{name} {why}")


def _default_fail(name: str, why: str) -> Exception:
    return FileRefused("path", name, why)


def read_bytes(path: str | os.PathLike, limit: int, fail: Fail = _default_fail) -> bytes:
    """At most ``limit`` bytes of the regular file at ``path``; anything else raises ``fail(name, why)``.

    Opened non-blocking (a FIFO does not hang) and checked on the open descriptor (no race with a
    swapped path); reads ``limit + 1`` bytes at most, so a device or a growing file cannot fill memory.
    """
    p = Path(path)
    name = p.name or str(p)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(p, flags)
    except (OSError, ValueError) as exc:   # ValueError: a path with a NUL byte
        raise fail(name, f"cannot open it ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            what = ("a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket or special file")
            raise fail(name, f"is not a regular file (it is {what})")
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            try:
                chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            except OSError as exc:
                raise fail(name, f"cannot read it ({exc.strerror or exc})") from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:       # the size stat reports is only told, never trusted for the bound
            size = f" (it is {st.st_size:,} bytes)" if st.st_size > limit else ""
            raise fail(name, f"is larger than the {limit:,} bytes read here{size}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike, limit: int, fail: Fail = _default_fail, encoding: str = "utf-8",
              not_text: str = "is not UTF-8 text (is it a binary file?)") -> str:
    """:func:`read_bytes` decoded; undecodable bytes raise ``fail(name, not_text)``."""
    data = read_bytes(path, limit, fail)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        p = Path(path)
        raise fail(p.name or str(p), not_text) from None


def tree_size(obj: object, limit: int = MAX_NODES) -> tuple[int, int]:
    """(values once aliases are expanded, nesting depth) of parsed data, without expanding anything:
    each shared list/map is sized once; a list/map inside itself (``&a [*a]``) counts as ``limit + 1``
    values. Stops counting past ``limit``. Iterative, so it cannot overflow the stack itself."""
    sizes: dict[int, tuple[int, int]] = {}
    entered: set[int] = set()
    stack: list[tuple[object, bool]] = [(obj, False)]
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in sizes:
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if not children_done:
            if id(node) in entered:           # an ancestor of itself: infinite once expanded
                return limit + 1, limit + 1
            entered.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if isinstance(c, (dict, list)) and id(c) not in sizes)
            continue
        n, depth = 1, 1
        for c in children:
            cn, cd = sizes.get(id(c), (1, 0)) if isinstance(c, (dict, list)) else (1, 0)
            n, depth = min(limit + 1, n + cn), max(depth, cd + 1)
        sizes[id(node)] = (n, depth)
    return sizes.get(id(obj), (1, 0))


def check_tree(obj: object, field: str, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> object:
    """``obj`` unchanged when it is finite, at most ``max_depth`` deep and ``max_nodes`` values big."""
    n, depth = tree_size(obj, max_nodes)
    if n > max_nodes:
        raise ValidationError(field, f"expands to more than {max_nodes:,} values (recursive or repeated YAML "
                                     "aliases?)", f"at most {max_nodes:,}")
    if depth > max_depth:
        raise ValidationError(field, f"nested {depth} levels deep", f"at most {max_depth}")
    return obj


def load_json(text: str, field: str = "file", max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> object:
    """The JSON in ``text``, checked by :func:`check_tree`; anything unreadable is a ValidationError."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(field, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise ValidationError(field, "not read: nested too deeply", f"at most {max_depth} levels") from None
    except (ValueError, TypeError) as exc:   # ValueError: an integer past Python's digit limit
        raise ValidationError(field, f"not valid JSON: {exc}") from None
    return check_tree(doc, field, max_nodes, max_depth)


def load_yaml_all(text: str, field: str = "yaml", max_nodes: int = MAX_NODES,
                  max_depth: int = MAX_DEPTH) -> list:
    """Every non-empty YAML document in ``text`` (safe loader), each checked by :func:`check_tree`
    and all together at most ``max_nodes`` values."""
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ValidationError(field, f"not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise ValidationError(field, "not read: nested too deeply", f"at most {max_depth} levels") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a 5,000-digit integer, an unhashable key
        raise ValidationError(field, f"not valid YAML: {exc}") from None
    check_tree(docs, field, max_nodes, max_depth + 1)
    return docs


def in_file(exc: ValidationError, name: str) -> ValidationError:
    """``exc`` with the file's name in front of its message (same field), for a reader's caller who
    sees only the message: "prices.json: gpu_rental[0].gpu: {} is not a GPU …"."""
    out = ValidationError(exc.field, f"{name}: {str(exc).split(': ', 1)[-1]}")
    out.allowed = exc.allowed
    return out


def read_json(path: str | os.PathLike, limit: int, field: str = "file", max_nodes: int = MAX_NODES,
              max_depth: int = MAX_DEPTH) -> object:
    """A user's JSON file, bounded and checked; every problem a ValidationError on ``field`` naming the file."""
    def fail(name: str, why: str) -> Exception:
        return FileRefused(field, name, why)

    p = Path(path)
    text = read_text(p, limit, fail, not_text="is not UTF-8 text")
    try:
        return load_json(text, field, max_nodes, max_depth)
    except ValidationError as exc:
        raise in_file(exc, p.name) from None


__all__ = ["MAX_DEPTH", "MAX_NODES", "FileRefused", "read_bytes", "read_text", "tree_size", "check_tree",
           "load_json", "load_yaml_all", "in_file", "read_json"]
