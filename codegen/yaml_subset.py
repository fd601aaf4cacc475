"""A quick reader for the plain subset of YAML that op files are written in.

Op files use a small part of YAML: block mappings with plain keys, block sequences, plain,
quoted and literal (``|``) scalars, and one-line flow collections. :func:`read_subset` reads
exactly that part, line by line with an explicit stack, into the same located
:class:`Map`/:class:`Seq` documents that :mod:`opspec.codegen.source` builds from libyaml's
nodes, with the same values and locations. Whatever it is not sure of (anchors, tags,
multi-line plain or quoted scalars, folded or chomped block scalars, escapes, tabs, unusual
line breaks, a null value, a duplicate key, any syntax error ...) makes it give up and return
``None``: the caller then reads the text with libyaml, which either builds the document or says
precisely what is wrong. So this reader never accepts a text libyaml refuses, and never reads
one differently.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from opspec.codegen.located import Location, Map, Seq


class GiveUp(Exception):
    """The text leaves the subset: libyaml must read it."""


#: Characters that may not start a plain scalar (YAML's indicators).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: A plain scalar in a flow collection: up to a flow indicator or a colon (a comment is checked apart).
_FLOW_PLAIN = re.compile(r"[^,\[\]{}:]*")
_QUOTED = {'"': re.compile(r'"([^"\\]*)"'), "'": re.compile(r"'((?:[^']|'')*)'")}
#: What may not follow a dash that starts a plain scalar in a flow collection.
_FLOW_ENDS = frozenset(("", " ", ",", "[", "]", "{", "}"))

#: The typing of a plain scalar, given by the caller (a :class:`GiveUp` when it is unsure; the same few
#: texts recur in every file, so the caller's typing is best cached).
Typer = Callable[[str], Any]
_MAP, _SEQ, _INDENTLESS = 0, 1, 2


def read_subset(text: str, path: str, max_depth: int, plain: Typer) -> Any | None:
    """The document ``text`` holds, read as libyaml would read it, or ``None`` when the text is
    not in the subset (``plain`` types plain scalars; nesting ``max_depth`` deep gives up)."""
    lines = text.split("\n")
    # Python's printable characters are a subset of what libyaml reads: no tab, no other line break,
    # no byte-order mark, no control character
    if not all(map(str.isprintable, lines)):
        return None
    try:
        return _read(lines, path, max_depth, plain)
    except GiveUp:
        return None


def _read(lines: list[str], path: str, max_depth: int, plain: Typer) -> Any:
    """The document of ``lines``: a block mapping or sequence at column 0.

    Each line with content is checked against the open containers (a line must stand at the
    column of the innermost one it belongs to, so a scalar continued on the next line, or a stray
    line, makes the reader give up); a value is read where it is written.
    """
    at = _Locator(path)
    new = _new_location
    #: The open block containers, innermost last: (kind, column of their keys or dashes, container).
    stack: list[tuple[int, int, Any]] = []
    pending: tuple[Map, Any, int] | None = None  # a key whose value starts on a later line
    root: Any = None
    row, count = 0, len(lines)
    while row < count:
        line = lines[row]
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            row += 1
            continue
        column = len(line) - len(content)
        dash = content[0] == "-" and (len(content) == 1 or content[1] == " ")
        if column == 0 and (content[0] == "%" or content.startswith(("---", "..."))):
            raise GiveUp  # a directive or a document marker
        if pending is not None:  # the block value of the key on the line before
            parent, key, key_column = pending
            pending = None
            if column > key_column:
                kind = _SEQ if dash else _MAP
            elif column == key_column and dash:
                kind = _INDENTLESS
            else:
                raise GiveUp  # a null value
            if len(stack) >= max_depth:
                raise GiveUp
            parent.value_locations[key] = where = new(Location, (path, row + 1, column + 1))
            container: Any = Seq.made_at(where) if dash else Map.made_at(where)
            parent[key] = container
        elif not stack:
            if root is not None or column:
                raise GiveUp
            where = new(Location, (path, row + 1, 1))
            container = root = Seq.made_at(where) if dash else Map.made_at(where)
            kind = _SEQ if dash else _MAP
        else:
            while stack[-1][1] > column or stack[-1][0] == _INDENTLESS and stack[-1][1] == column and not dash:
                stack.pop()
                if not stack:
                    raise GiveUp  # less indented than the document
            kind, open_column, container = stack[-1]
            if open_column != column or (kind != _MAP) != dash:
                raise GiveUp  # a continued scalar, a stray line, or a mapping and a sequence mixed
            kind = -1  # nothing new opens at this line's start
        if kind >= 0:
            stack.append((kind, column, container))
        if dash:  # an item: a mapping that starts on this line, or a value
            start = len(line) - len(content[1:].lstrip(" "))
            if start == column + 1 or start >= len(line) or line[start] == "#":
                raise GiveUp  # a dash without a space, or an item on the lines below
            item_at = new(Location, (path, row + 1, start + 1))
            container.item_locations.append(item_at)
            first = line[start]
            if first == "-" and (len(line) == start + 1 or line[start + 1] == " "):
                raise GiveUp  # a sequence in a sequence's item
            if first in _NOT_KEYS or line.find(": ", start) < 0 and not line.endswith(":"):
                value, row = _value(lines, row, start, column, len(stack), max_depth, plain, at)
                container.append(value)
                continue
            if len(stack) >= max_depth:
                raise GiveUp
            item = Map.made_at(item_at)
            container.append(item)
            stack.append((_MAP, start, item))
            container, column = item, start
        # a key, its colon, and a value on this line or a block on the lines below
        colon = line.find(": ", column)
        if colon < 0:
            if not line.endswith(":"):
                raise GiveUp
            colon = len(line) - 1
        key_text = line[column:colon]
        if not key_text or key_text[0] in _INDICATORS or key_text[-1] == " " or "#" in key_text or len(key_text) > 1000:
            raise GiveUp
        key = plain(key_text)
        keys = container.key_locations
        if key in keys:
            raise GiveUp  # libyaml's reading reports the duplicate
        keys[key] = new(Location, (path, row + 1, column + 1))
        start = colon + 2
        while start < len(line) and line[start] == " ":
            start += 1
        if start >= len(line) or line[start] == "#":
            pending = (container, key, column)
            row += 1
            continue
        container.value_locations[key] = new(Location, (path, row + 1, start + 1))
        if line[start] in "'\"":
            container.quoted.add(key)
        container[key], row = _value(lines, row, start, column, len(stack), max_depth, plain, at)
    if pending is not None or root is None:
        raise GiveUp  # a null value, or no document
    return root


#: What starts an item that is a value even where a colon follows (a key written so is for libyaml).
_NOT_KEYS = frozenset("'\"[{|")


def _value(lines: list[str], row: int, start: int, parent: int, depth: int, max_depth: int, plain: Typer,
           at: _Locator) -> tuple[Any, int]:
    """The value written from ``start`` of line ``row`` (a scalar, a literal block or a one-line flow
    collection) under a node whose keys or dashes stand at column ``parent``, and the line after it."""
    line = lines[row]
    first = line[start]
    if first == "|":
        return _literal(lines, row, start, parent)
    if first == "[" or first == "{":
        value, end = _Flow(line, row, at, plain, max_depth).node(start, depth)
    elif first == "'" or first == '"':
        match = _QUOTED[first].match(line, start)
        if match is None:
            raise GiveUp
        value, end = match.group(1), match.end()
        if first == "'":
            value = value.replace("''", "'")
    else:
        if first in _INDICATORS and not (first == "-" and start + 1 < len(line) and line[start + 1] != " "):
            raise GiveUp
        comment = line.find(" #", start)
        text = (line[start:] if comment < 0 else line[start:comment]).rstrip(" ")
        if ": " in text or text[-1] == ":":
            raise GiveUp
        value, end = plain(text), start + len(text)
    if end < len(line):
        rest = line[end:].lstrip(" ")
        if rest and (rest[0] != "#" or len(rest) == len(line) - end):
            raise GiveUp  # more after the value, or a comment not after a space
    return value, row + 1


def _literal(lines: list[str], row: int, start: int, parent: int) -> tuple[str, int]:
    """A literal block scalar (``|``: lines kept, one final line break), and the line after it."""
    header = lines[row][start + 1:]
    if header and (header[0] != " " or header.strip(" ") and header.lstrip(" ")[0] != "#"):
        raise GiveUp  # chomping or indentation indicators, or more after the bar
    first = row + 1
    if first >= len(lines) or not lines[first].strip(" "):
        raise GiveUp  # no text, or leading empty lines
    indent = len(lines[first]) - len(lines[first].lstrip(" "))
    if indent <= parent or indent == 0:
        raise GiveUp
    kept: list[str] = []
    end = first
    while end < len(lines):
        text = lines[end]
        if text[:indent].strip(" "):
            break  # a line less indented than the block
        if not text[indent:]:
            if text.strip(" "):
                break
            kept.append("")
        elif len(text) > indent and not text.strip(" "):
            raise GiveUp  # an empty line with more spaces than the block's indentation
        else:
            kept.append(text[indent:])
        end += 1
    while kept and not kept[-1]:
        kept.pop()
    if end == len(lines) and lines[-1]:
        raise GiveUp  # no line break after the last line
    return "\n".join(kept) + "\n", end


class _Locator:
    """Makes the locations of one file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, row: int, column: int) -> Location:
        return _new_location(Location, (self.path, row + 1, column + 1))


_new_location = tuple.__new__


class _Flow:
    """A one-line flow collection (``[a, b]``, ``{k: v}``), nested as the line says."""

    def __init__(self, line: str, row: int, at: _Locator, plain: Typer, max_depth: int) -> None:
        self.line, self.row, self.at, self.plain, self.max_depth = line, row, at, plain, max_depth

    def skip(self, index: int) -> int:
        line = self.line
        while index < len(line) and line[index] == " ":
            index += 1
        return index

    def node(self, index: int, depth: int) -> tuple[Any, int]:
        line = self.line
        if index >= len(line):
            raise GiveUp
        first = line[index]
        if first == "[" or first == "{":
            if depth >= self.max_depth:
                raise GiveUp
            return self.sequence(index, depth) if first == "[" else self.mapping(index, depth)
        if first == "'" or first == '"':
            match = _QUOTED[first].match(line, index)
            if match is None:
                raise GiveUp
            value = match.group(1)
            return (value.replace("''", "'") if first == "'" else value), match.end()
        return self.plain_scalar(index)

    def plain_scalar(self, index: int) -> tuple[Any, int]:
        line = self.line
        if index >= len(line):
            raise GiveUp
        first = line[index]
        if first == " " or first in _INDICATORS and not (first == "-" and line[index + 1:index + 2] not in _FLOW_ENDS):
            raise GiveUp
        text = _FLOW_PLAIN.match(line, index).group().rstrip(" ")  # type: ignore[union-attr]
        if " #" in text:
            raise GiveUp
        return self.plain(text), index + len(text)

    def entry_end(self, index: int, close: str) -> tuple[int, bool]:
        """Past an entry's end: the next entry's start (and False) after a comma, or the position past
        ``close`` (and True); anything else gives up."""
        line, index = self.line, self.skip(index)
        if line.startswith(",", index):
            index = self.skip(index + 1)
            if line.startswith(close, index):
                raise GiveUp  # a trailing comma
            return index, False
        if line.startswith(close, index):
            return index + 1, True
        raise GiveUp

    def sequence(self, index: int, depth: int) -> tuple[Seq, int]:
        line, made = self.line, Seq.made_at(self.at(self.row, index))
        index = self.skip(index + 1)
        if line.startswith("]", index):
            return made, index + 1
        while True:
            made.item_locations.append(self.at(self.row, index))
            item, index = self.node(index, depth + 1)
            made.append(item)
            index, ended = self.entry_end(index, "]")
            if ended:
                return made, index

    def mapping(self, index: int, depth: int) -> tuple[Map, int]:
        line, made = self.line, Map.made_at(self.at(self.row, index))
        index = self.skip(index + 1)
        if line.startswith("}", index):
            return made, index + 1
        while True:
            key_at = self.at(self.row, index)
            key, index = self.plain_scalar(index)
            if not line.startswith(": ", index) or key in made:
                raise GiveUp  # a key without a value, a spaced colon, or a duplicate
            made.key_locations[key] = key_at
            index = self.skip(index + 1)
            if index >= len(line) or line[index] in ",}#":
                raise GiveUp  # a null value
            made.value_locations[key] = self.at(self.row, index)
            if line[index] in "'\"":
                made.quoted.add(key)
            made[key], index = self.node(index, depth + 1)
            index, ended = self.entry_end(index, "}")
            if ended:
                return made, index
