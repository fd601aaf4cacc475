"""Parse function bodies written in ONNX's text syntax into ``FunctionProto`` messages.

A body is a list of node statements, one per line::

    Zero = Constant <value: tensor = float {0}> ()
    Y = Max (X, ZeroCast)
    out1, out2 = Loop (n, cond, v) <body: graph = step (int64 i, bool c, v) => (c_out, v_out) {
        ...
    }>

Attribute values are numbers, strings, lists, references to an attribute of the
enclosing operator (``@alpha``), tensor literals (``float {0.5}``, ``int64[2] {1, 2}``)
and graphs. The result is wire-identical to what ``onnx.parser`` builds for the same
text; ``onnx`` itself is never imported.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.kinds import AttrType
from opspec.runtime.types import ELEMENT_TYPES

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
      | (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<name>[A-Za-z_][\w.]*)
      | (?P<punct>=>|[=<>(){}\[\],:@])
    )""",
    re.VERBOSE,
)
#: The attribute kinds a body's text may declare, by their spelling (``ints``).
_ATTR_TYPES = {kind.spelling: kind for kind in (AttrType.FLOAT, AttrType.INT, AttrType.STRING, AttrType.TENSOR,
                                                AttrType.GRAPH, AttrType.FLOATS, AttrType.INTS, AttrType.STRINGS)}
#: The TensorProto field that holds a constant's values, by element type (others: ``int32_data``).
_TENSOR_FIELD = {ElementType.FLOAT: "float_data", ElementType.DOUBLE: "double_data", ElementType.INT64: "int64_data",
                 ElementType.STRING: "string_data", ElementType.UINT32: "uint64_data",
                 ElementType.UINT64: "uint64_data"}



class FunctionTextError(ValueError):
    """A body that does not parse; the message names the body line."""


class _Tokens:
    def __init__(self, text: str):
        self.text = text
        self.items: list[tuple[str, str, int]] = []
        position = 0
        while text[position:].strip():
            match = _TOKEN.match(text, position)
            if not match:
                offset = len(text) - len(text[position:].lstrip())
                raise FunctionTextError(f"line {text.count(chr(10), 0, offset) + 1}: unexpected character "
                                        f"{text[offset]!r}")
            kind = match.lastgroup or "punct"
            self.items.append((kind, match.group(kind), match.start(kind)))
            position = match.end()
        self.index = 0

    def peek(self, ahead: int = 0) -> str | None:
        index = self.index + ahead
        return self.items[index][1] if index < len(self.items) else None

    def kind(self) -> str | None:
        return self.items[self.index][0] if self.index < len(self.items) else None

    def take(self) -> str:
        if self.index >= len(self.items):
            raise FunctionTextError("unexpected end of the body")
        self.index += 1
        return self.items[self.index - 1][1]

    def fail(self, message: str) -> FunctionTextError:
        """An error at the last token taken."""
        offset = self.items[max(self.index - 1, 0)][2] if self.items else 0
        return FunctionTextError(f"line {self.text.count(chr(10), 0, offset) + 1}: {message}")

    def expect(self, text: str) -> None:
        found = self.take()
        if found != text:
            raise self.fail(f"expected {text!r}, found {found!r}")

    def accept(self, text: str) -> bool:
        if self.peek() == text:
            self.index += 1
            return True
        return False


def _separated(tokens: _Tokens, closing: str, item: Callable[[], Any]) -> list[Any]:
    """Items read by ``item``, separated by commas, up to and including ``closing``."""
    items: list[Any] = []
    if tokens.accept(closing):
        return items
    while True:
        items.append(item())
        if tokens.accept(closing):
            return items
        tokens.expect(",")


def _names(tokens: _Tokens, closing: str) -> list[str]:
    """Comma-separated value names up to ``closing`` (an empty slot is the empty name)."""
    return _separated(tokens, closing, lambda: "" if tokens.peek() in (",", closing) else tokens.take())


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def _scalar(tokens: _Tokens) -> Any:
    kind, text = tokens.kind(), tokens.take()
    if kind == "number":
        return _number(text)
    if kind == "string":
        return bytes(text[1:-1], "utf-8").decode("unicode_escape").encode("utf-8")
    raise tokens.fail(f"expected a value, found {text!r}")


def _tensor(tokens: _Tokens, proto: Any) -> None:
    element = tokens.take()
    if element not in ELEMENT_TYPES:
        raise tokens.fail(f"unknown element type {element!r}")
    proto.data_type = ELEMENT_TYPES[element]
    if tokens.accept("["):
        proto.dims.extend(int(d) for d in _names(tokens, "]"))
    tokens.expect("{")
    values = _separated(tokens, "}", lambda: _scalar(tokens))
    field = _TENSOR_FIELD.get(proto.data_type, "int32_data")
    getattr(proto, field).extend(float(v) if field in ("float_data", "double_data") else v for v in values)


def _value_info(tokens: _Tokens, info: Any) -> None:
    if tokens.peek(1) not in (",", ")", None):
        element = tokens.take()
        if element not in ELEMENT_TYPES:
            raise tokens.fail(f"unknown element type {element!r}")
        tensor = info.type.tensor_type
        tensor.elem_type = ELEMENT_TYPES[element]
        tensor.shape.SetInParent()
        if tokens.accept("["):
            for dim in _names(tokens, "]"):
                if dim.lstrip("-").isdigit():
                    tensor.shape.dim.add().dim_value = int(dim)
                else:
                    tensor.shape.dim.add().dim_param = dim
    info.name = tokens.take()


def _graph(tokens: _Tokens, graph: Any, module: Any) -> None:
    graph.name = tokens.take()
    for target in (graph.input, graph.output):
        tokens.expect("(")
        _separated(tokens, ")", lambda: _value_info(tokens, target.add()))  # noqa: B023 - called at once
        if target is graph.input:
            tokens.expect("=>")
    tokens.expect("{")
    while not tokens.accept("}"):
        _node(tokens, graph.node.add(), module)


def _attribute(tokens: _Tokens, attribute: Any, module: Any) -> None:
    attribute.name = tokens.take()
    declared = None
    if tokens.accept(":"):
        declared = tokens.take()
        if declared not in _ATTR_TYPES:
            raise tokens.fail(f"unknown attribute type {declared!r}")
    tokens.expect("=")
    if tokens.accept("@"):
        attribute.ref_attr_name = tokens.take()
        if declared is None:
            raise tokens.fail(f"attribute {attribute.name!r}: a reference needs a declared type (name: type = @ref)")
        attribute.type = _ATTR_TYPES[declared]
        return
    if declared == "graph" or (declared is None and tokens.peek(1) == "("):
        attribute.type = _ATTR_TYPES["graph"]
        _graph(tokens, attribute.g, module)
        return
    if declared == "tensor" or tokens.peek() in ELEMENT_TYPES:
        attribute.type = _ATTR_TYPES["tensor"]
        _tensor(tokens, attribute.t)
        return
    if tokens.accept("["):
        values = _separated(tokens, "]", lambda: _scalar(tokens))
        kind = declared or ("strings" if values and isinstance(values[0], bytes) else
                            "floats" if any(isinstance(v, float) for v in values) else "ints")
        if kind not in ("floats", "ints", "strings"):
            raise tokens.fail(f"attribute {attribute.name!r}: a list needs a list type, not {kind}")
        attribute.type = _ATTR_TYPES[kind]
        target = {"floats": attribute.floats, "ints": attribute.ints, "strings": attribute.strings}[kind]
        target.extend(float(v) if kind == "floats" else v for v in values)
        return
    value = _scalar(tokens)
    if declared in ("floats", "ints", "strings", "graph", "tensor"):
        raise tokens.fail(f"attribute {attribute.name!r}: expected a {declared} value")
    kind = declared or ("string" if isinstance(value, bytes) else "float" if isinstance(value, float) else "int")
    attribute.type = _ATTR_TYPES[kind]
    if kind == "float":
        attribute.f = float(value)
    elif kind == "int":
        attribute.i = int(value)
    else:
        attribute.s = value


def _node(tokens: _Tokens, node: Any, module: Any) -> None:
    node.output.extend(_separated(tokens, "=", tokens.take))
    op_type = tokens.take()
    domain, _, name = op_type.rpartition(".")
    node.op_type = name
    node.domain = domain
    def attributes() -> None:
        _attribute(tokens, node.attribute.add(), module)

    if tokens.accept("<"):
        _separated(tokens, ">", attributes)
    tokens.expect("(")
    node.input.extend(_names(tokens, ")"))
    if tokens.accept("<"):  # attributes may also follow the inputs
        _separated(tokens, ">", attributes)


def parse_nodes(text: str) -> list[Any]:
    """The ``NodeProto`` messages of a body, in order."""
    from opspec.generated import opspec_ir_pb2 as module

    tokens = _Tokens(text)
    nodes = []
    while tokens.peek() is not None:
        node = module.NodeProto()
        try:
            _node(tokens, node, module)
        except FunctionTextError:
            raise
        except (ValueError, TypeError, KeyError, RecursionError) as error:  # a value of the wrong kind for its field
            raise tokens.fail(f"bad value: {error}") from None
        nodes.append(node)
    return nodes


def references(nodes: list[Any]) -> list[str]:
    """Names of the operator attributes a body refers to (``@name``), in first-use order."""
    found: dict[str, None] = {}
    for node in nodes:
        for attribute in node.attribute:
            if attribute.ref_attr_name:
                found[attribute.ref_attr_name] = None
            if attribute.HasField("g"):
                found.update(dict.fromkeys(references(list(attribute.g.node))))
    return list(found)


@lru_cache(maxsize=None)
def _serialized(name: str, domain: str, inputs: tuple[str, ...], outputs: tuple[str, ...], opset: int,
                text: str) -> bytes:
    from opspec.generated import opspec_ir_pb2 as module

    function = module.FunctionProto(name=name, domain=domain, input=inputs, output=outputs)
    function.opset_import.add(domain=domain, version=opset)
    nodes = parse_nodes(text)
    function.node.extend(nodes)
    function.attribute.extend(references(nodes))
    return function.SerializeToString()


def function_proto(schema: Any, body: Any) -> Any:
    """``body`` (a :class:`FunctionBody` of ``schema``) as a fresh ``FunctionProto``."""
    from opspec.generated import opspec_ir_pb2 as module

    data = _serialized(schema.name, schema.domain, tuple(p.name for p in schema.inputs),
                       tuple(p.name for p in schema.outputs), body.opset, body.text)
    return module.FunctionProto.FromString(data)
