"""Safe YAML loading that remembers where every key and value came from.

Documents are built from PyYAML's event stream (no object construction, no custom tags)
into plain dicts, lists and scalars, without recursion: nesting is capped at
``MAX_DEPTH``, anchors and aliases are refused, only regular files of at most
``MAX_FILE_BYTES`` are read, and plain scalars follow YAML 1.2's core schema (``on``,
``yes`` and ``off`` stay strings). Each dict and list carries a :class:`Location` for
itself and for each of its keys and items, so any later check can point at
``file:line:col``.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from functools import lru_cache
from typing import Any, Protocol

import yaml

from opspec.codegen.located import Location, Map, Seq, SourceError
from opspec.codegen.yaml_subset import GiveUp, read_subset
from yaml import SafeLoader as _PureLoader

try:  # libyaml is much faster; the pure-Python parser gives identical events.
    from yaml import CSafeLoader as _FastLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    _FastLoader = _PureLoader  # type: ignore[misc, assignment]  # the stubs type the two loaders apart

#: Deepest nesting of mappings and lists accepted (opdefs need fewer than ten levels).
MAX_DEPTH = 64
#: Largest file read, in bytes.
MAX_FILE_BYTES = 4 * 1024 * 1024

_TAG = "tag:yaml.org,2002:"
_STANDARD_TAGS = {_TAG + name for name in ("str", "int", "float", "bool", "null", "map", "seq")}
_STR_TAG = _TAG + "str"
_scalars = yaml.constructor.SafeConstructor()


class _CoreResolver(yaml.resolver.BaseResolver):
    """PyYAML's implicit typing of plain scalars, minus YAML 1.1's extra booleans and timestamps."""

    yaml_implicit_resolvers: dict = {}


for _first, _resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items():
    for _tag, _pattern in _resolvers:
        if _tag in (_TAG + "int", _TAG + "float", _TAG + "null", _TAG + "merge"):
            _CoreResolver.add_implicit_resolver(_tag, _pattern, [_first])
_CoreResolver.add_implicit_resolver(_TAG + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                    list("tTfF"))
_resolver = _CoreResolver()

#: The first characters of plain scalars that may be typed (an int, a float, a bool, null or a merge key);
#: ``""`` stands for the empty scalar (null). Every resolver above names its first characters.
_TYPED_FIRST = frozenset(_CoreResolver.yaml_implicit_resolvers)

__all__ = ["Location", "Map", "Seq", "SourceError", "load_yaml", "parse_yaml"]


class _Mark(Protocol):
    """A position in the text, as both the pure-Python and the libyaml parser report it."""

    line: int
    column: int


def _where(path: str, mark: _Mark | None) -> Location:
    return Location(path, mark.line + 1, mark.column + 1) if mark is not None else Location(path, 1, 1)


@lru_cache(maxsize=1 << 16)
def _implicit_tag(value: str, implicit: tuple[bool, bool]) -> str:
    """The tag of an untagged scalar (the same few texts recur in every file: resolved once)."""
    return _resolver.resolve(yaml.ScalarNode, value, implicit)


def _scalar(path: str, event: yaml.ScalarEvent) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        tag = _implicit_tag(event.value, event.implicit)
    if tag == _TAG + "merge":
        raise SourceError(_where(path, event.start_mark), "YAML merge keys ('<<') are not supported")
    if tag not in _STANDARD_TAGS:
        raise SourceError(_where(path, event.start_mark), f"unsupported YAML tag {tag!r}")
    if tag == _STR_TAG:  # the common case: the text itself, as the constructor would give it
        return event.value
    try:
        return _scalars.construct_object(yaml.ScalarNode(tag, event.value))
    except (ValueError, yaml.YAMLError):
        raise SourceError(_where(path, event.start_mark),
                          f"cannot read {event.value[:20]!r}... as {tag[len(_TAG):]}") from None


class _Builder:
    """Turns events into Map/Seq/scalars with an explicit stack (no recursion on user data)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stack: list[tuple[Any, Any]] = []  # (container, pending key event or _NO_KEY)
        self.root: Any = _NOTHING

    def start(self, kind: type[Map] | type[Seq], event: yaml.Event) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise SourceError(_where(self.path, event.start_mark), f"nesting deeper than {MAX_DEPTH} levels")
        container = kind.made_at(_where(self.path, event.start_mark))
        self.place(container, event)
        self.stack.append((container, _NO_KEY))

    def place(self, value: Any, event: yaml.Event) -> None:
        if not self.stack:
            self.root = value
            return
        container, key = self.stack[-1]
        where = _where(self.path, event.start_mark)
        if isinstance(container, Seq):
            container.append(value)
            container.item_locations.append(where)
            return
        if key is _NO_KEY:
            if isinstance(value, (Map, Seq)):
                raise SourceError(where, "mapping keys must be plain scalars")
            if value in container:
                first = container.key_locations[value]
                raise SourceError(where, f"duplicate key {value!r} (first defined at line {first.line})")
            self.stack[-1] = (container, (value, where))
            return
        name, key_where = key
        container[name] = value
        container.key_locations[name] = key_where
        container.value_locations[name] = where
        if isinstance(event, yaml.ScalarEvent) and event.style in ("'", '"'):
            container.quoted.add(name)
        self.stack[-1] = (container, _NO_KEY)

    def end(self) -> None:
        self.stack.pop()


_NO_KEY = object()
_NOTHING = object()


def _build(text: str, display: str) -> Any:
    """Build the document with the subset reader (op files' plain YAML, read line by line) or libyaml;
    when libyaml fails, find the first problem with the pure parser.

    libyaml scans ahead of the events it hands out and has limits of its own that differ
    between releases (a flow nesting cap fires a thousand levels in, before our
    ``MAX_DEPTH`` is reached). PyYAML's pure-Python parser has no such limits and yields
    the same events, so on an error it says which problem comes first in the file,
    whatever libyaml the installed PyYAML carries. Valid files never take that path.
    """
    document = read_subset(text, display, MAX_DEPTH, _plain_text)
    if document is not None:
        return document
    if _NODES_ARE_BOUNDED and "&" not in text and "!" not in text:  # no anchor, alias or tag can be written
        try:
            return _build_from_nodes(_Composer(text).get_single_node(), display)
        except (yaml.YAMLError, _Unsure):
            pass  # the event path below says what is wrong, exactly where
    try:
        return _build_with(_FastLoader, text, display)
    except yaml.YAMLError:
        if _FastLoader is _PureLoader:
            raise
        return _build_with(_PureLoader, text, display)


#: libyaml composes nodes in C, recursively: only where it caps the nesting of the text itself.
_NODES_ARE_BOUNDED = _FastLoader is not _PureLoader and getattr(getattr(yaml, "_yaml", None), "get_version",
                                                                   lambda: (0, 0, 0))() >= (0, 2, 6)


class _Composer(getattr(yaml, "_yaml", yaml).CParser if _NODES_ARE_BOUNDED else object):  # type: ignore[misc]
    """libyaml's composer, leaving tags unresolved: :func:`_plain_scalar` types each scalar itself."""

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        return ""

    def descend_resolver(self, parent: object, index: object) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class _Unsure(GiveUp):
    """The node path met something the event path must judge (it then reads the text again)."""


def _plain_scalar(node: yaml.ScalarNode) -> Any:
    return node.value if node.style else _plain_text(node.value)  # quoted, literal or folded: the text


@lru_cache(maxsize=1 << 15)
def _plain_text(value: str) -> Any:
    """A plain scalar's value, typed as the core schema types it (once per text: the same few texts
    recur in every file)."""
    if value[:1] not in _TYPED_FIRST:  # no typed scalar starts so
        return value
    tag = _implicit_tag(value, (True, False))
    if tag == _STR_TAG:
        return value
    if tag not in _STANDARD_TAGS:  # a merge key
        raise _Unsure
    try:
        return _scalars.construct_object(yaml.ScalarNode(tag, value))
    except (ValueError, yaml.YAMLError):
        raise _Unsure from None


def _build_from_nodes(root: yaml.Node | None, path: str) -> Any:
    """A document composed by libyaml (no Python event loop) turned into Map/Seq/scalars with
    locations, as :func:`_build_with` would; anything it would refuse raises :class:`_Unsure`."""
    if root is None:
        return _NOTHING
    if type(root) is yaml.ScalarNode:
        return _plain_scalar(root)
    pending: list[tuple[yaml.Node, Any, int]] = []

    def container(node: yaml.Node, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            raise _Unsure
        mark = node.start_mark
        made = (Map if type(node) is yaml.MappingNode else Seq).made_at(Location(path, mark.line + 1, mark.column + 1))
        pending.append((node, made, depth))
        return made

    document = container(root, 0)
    while pending:
        node, made, depth = pending.pop()
        if type(made) is Seq:
            locations = made.item_locations
            for item in node.value:
                mark = item.start_mark
                locations.append(Location(path, mark.line + 1, mark.column + 1))
                made.append(_plain_scalar(item) if type(item) is yaml.ScalarNode else container(item, depth + 1))
            continue
        keys, values = made.key_locations, made.value_locations
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode:
                raise _Unsure
            key = _plain_scalar(key_node)
            if key in made:
                raise _Unsure
            if type(value_node) is yaml.ScalarNode:
                made[key] = _plain_scalar(value_node)
                if value_node.style in ("'", '"'):
                    made.quoted.add(key)
            else:
                made[key] = container(value_node, depth + 1)
            mark = key_node.start_mark
            keys[key] = Location(path, mark.line + 1, mark.column + 1)
            mark = value_node.start_mark
            values[key] = Location(path, mark.line + 1, mark.column + 1)
    return document


def _build_with(loader: type, text: str, display: str) -> Any:
    builder = _Builder(display)
    documents = 0
    for event in yaml.parse(text, Loader=loader):
        if type(event) is yaml.ScalarEvent and event.anchor is None:  # most events: checked first
            builder.place(_scalar(display, event), event)
            continue
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise SourceError(_where(display, event.start_mark), "YAML anchors and aliases are not supported")
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise SourceError(_where(display, event.start_mark), "a file holds one YAML document")
        elif isinstance(event, yaml.MappingStartEvent):
            if event.tag not in (None, "!", _TAG + "map"):
                raise SourceError(_where(display, event.start_mark), f"unsupported YAML tag {event.tag!r}")
            builder.start(Map, event)
        elif isinstance(event, yaml.SequenceStartEvent):
            if event.tag not in (None, "!", _TAG + "seq"):
                raise SourceError(_where(display, event.start_mark), f"unsupported YAML tag {event.tag!r}")
            builder.start(Seq, event)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            builder.end()
    return builder.root


def _decode(data: bytes, display: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = error.start - (before.rfind(b"\n") + 1) + 1
        raise SourceError(Location(display, line, column), "the file is not valid UTF-8") from None


def load_yaml(path: Path, display: str | None = None) -> Any:
    """Load one YAML document, keeping locations; raise :class:`SourceError` on any problem."""
    shown = display or str(path)
    return parse_yaml(_decode(_regular_file_bytes(path, shown), shown), shown)


def parse_yaml(text: str, display: str) -> Any:
    """Parse YAML text named ``display`` (used in locations)."""
    try:
        document = _build(text, display)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = Location(display, mark.line + 1, mark.column + 1) if mark else Location(display, 1, 1)
        problem = " ".join(part for part in (error.context, error.problem) if part)
        raise SourceError(where, f"YAML syntax error: {problem}") from None
    except yaml.YAMLError as error:
        where = Location(display, 1, 1)
        if isinstance(error, yaml.reader.ReaderError):  # an unacceptable character
            before = text[: error.position]
            where = Location(display, before.count("\n") + 1, error.position - (before.rfind("\n") + 1) + 1)
        reason = getattr(error, "reason", None) or "unreadable YAML"
        raise SourceError(where, f"YAML error: {reason}") from None
    if document is _NOTHING:
        raise SourceError(Location(display, 1, 1), "the file is empty")
    return document


def _regular_file_bytes(path: Path, shown: str) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most MAX_FILE_BYTES.

    Opened without blocking and checked after opening, so a FIFO, a device, a directory
    or a looping symlink is refused instead of read.
    """
    where = Location(shown, 1, 1)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError) as error:
        raise SourceError(where, f"cannot read file: {getattr(error, 'strerror', None) or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            mode = status.st_mode
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a special file"
            raise SourceError(where, f"not a regular file ({kind})")
        data = _read_up_to(descriptor, MAX_FILE_BYTES + 1, status.st_size + 1)
    except OSError as error:
        raise SourceError(where, f"cannot read file: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(where, f"the file is larger than {MAX_FILE_BYTES} bytes")
    return data


def _read_up_to(descriptor: int, limit: int, expected: int) -> bytes:
    """At most ``limit`` bytes from ``descriptor``, asking first for the ``expected`` size (a buffer of
    the limit's size, made for every small file, would cost more than reading it)."""
    parts, left, want = [], limit, expected
    while left > 0:
        chunk = os.read(descriptor, min(want, left))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
        want = 1 << 16  # the file grew since it was measured: the rest in pieces
    return b"".join(parts)
