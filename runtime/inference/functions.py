"""Expanding calls of model-local functions: a call is inferred by walking the function's body.

The body runs over the call's input types (and data) with the function's own opset
imports; attributes that refer to the call's attributes (``ref_attr_name``) are filled in
first. Results are kept per distinct input types and data for reuse by later calls.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from opspec.runtime.contract import InferenceError
from opspec.runtime.inference import node_errors
from opspec.runtime.inference.fresh_symbols import kept_names, renewed
from opspec.runtime.inference.nesting import (
    MAX_CALL_DEPTH,
    TOO_DEEP_FOR_STACK,
    CallChainTooDeep,
    out_of_stack,
    short_chain,
)
from opspec.runtime.inference.node_errors import NodeError, rule_failure
from opspec.runtime.inference.read_types import DimReader
from opspec.runtime.inference.resolve import normalize_opsets
from opspec.runtime.inference.walk import GraphWalk

if TYPE_CHECKING:
    from opspec.runtime.inference.walk import Walker
    from opspec.runtime.registry import Registry

#: Output types and output data of one call, by output position.
CallResult = tuple[list[Any], list[Any]]


class FunctionInfo:
    """A model-local function, prepared on its first call."""

    __slots__ = ("proto", "key", "inputs", "outputs", "defaults", "has_refs", "opsets", "entries", "declared",
                 "results")

    def __init__(self, proto: Any, model_opsets: dict[str, int], registry: Registry) -> None:
        self.proto = proto
        self.key: tuple[str, str] = (proto.domain, proto.name)
        self.inputs: list[str] = list(proto.input)
        self.outputs: list[str] = list(proto.output)
        self.defaults = {a.name: a for a in proto.attribute_proto}
        self.has_refs = any(a.ref_attr_name for node in proto.node for a in node.attribute)
        self.opsets = dict(model_opsets)
        self.opsets.update(normalize_opsets(proto.opset_import, registry))
        self.entries: dict[Any, Any] = {}
        self.declared: dict[str, Any] | None = None
        #: Clean results by input types and data, with the fresh symbols each holds (see :mod:`.fresh_symbols`).
        self.results: dict[Any, tuple[CallResult, tuple[str, ...]]] = {}

    def body(self, call: Any) -> Sequence[Any]:
        """The body's nodes, with attributes that refer to the call's attributes filled in."""
        if not self.has_refs:
            return self.proto.node
        given = dict(self.defaults)
        given.update({a.name: a for a in call.attribute})
        nodes = []
        for node in self.proto.node:
            if not any(a.ref_attr_name for a in node.attribute):
                nodes.append(node)
                continue
            copy = type(node)()
            copy.CopyFrom(node)
            del copy.attribute[:]
            for attribute in node.attribute:
                source = given.get(attribute.ref_attr_name) if attribute.ref_attr_name else attribute
                if source is None:
                    continue
                added = copy.attribute.add()
                added.CopyFrom(source)
                added.name = attribute.name
                added.ClearField("ref_attr_name")
            nodes.append(copy)
        return nodes

    def declared_types(self) -> dict[str, Any]:
        """The types the body's ``value_info`` declares, read once."""
        if self.declared is None:
            reader = DimReader()
            self.declared = {vi.name: t for vi in self.proto.value_info if (t := reader.value_info(vi)) is not None}
        return self.declared


class FunctionCalls:
    """The walk's hook for nodes that call a model-local function (``Walker.call_function``
    is :meth:`call`). One level of a call chain costs three Python frames: the walk, its
    ``_other`` and :meth:`call`, so chains reach their bound far below the recursion limit."""

    def __init__(self, walker: Walker) -> None:
        self.walker = walker
        self._active: set[tuple[str, str]] = set()
        #: The functions being called, outermost first.
        self._chain: list[str] = []

    def call(self, function: FunctionInfo, node: Any, types: Any, datas: Any, errors: list[NodeError],
             index: int, strict: bool) -> CallResult:
        """The output types and data of ``node``, a call of ``function``; problems in the body are
        the node's. Everything but the body's walk is done in helpers that have returned by then."""
        walker = self.walker
        chain = self._chain
        outermost = not chain
        inputs = [types.get(name) for name in node.input]
        data = [datas.get(name) for name in node.input]
        chain.append(function.proto.name)
        try:
            if len(chain) > MAX_CALL_DEPTH:
                raise CallChainTooDeep(list(chain))
            if out_of_stack():
                raise CallChainTooDeep(list(chain), TOO_DEEP_FOR_STACK)
            if function.key in self._active:
                walker.fail(errors, index, node, f"function '{function.proto.name}' calls itself", strict)
                return [], []
            cache_key = _result_key(function, inputs, data)
            if cache_key is not None and cache_key in function.results:
                kept, made = function.results[cache_key]
                return renewed(kept, made, walker.symbols)
            types, datas = _body_scope(function, inputs, data)
            inner: list[NodeError] = []
            symbols_before = walker.symbols.issued
            self._active.add(function.key)
            try:
                walker.run(GraphWalk(function.body(node), types, datas, function.declared_types(), function.opsets,
                                     function.entries, {}, inner, False))
            finally:
                self._active.discard(function.key)
            return self._result(function, node, types, datas, inner, errors, index, strict, cache_key,
                                symbols_before)
        except CallChainTooDeep as deep:
            if not outermost:
                raise
            walker.fail(errors, index, node, deep.message(), strict)
            return [], []
        except InferenceError:
            raise
        except Exception as error:  # noqa: BLE001 - a broken function body is this node's error
            if node_errors.RAISE_RULE_BUGS:
                raise
            walker.fail(errors, index, node, rule_failure(error), strict)
            return [], []
        finally:
            chain.pop()

    def _result(self, function: FunctionInfo, node: Any, types: dict[str, Any], datas: dict[str, Any],
                inner: list[NodeError], errors: list[NodeError], index: int, strict: bool,
                cache_key: Any, symbols_before: int) -> CallResult:
        """Report the body's problems against the call and read its outputs (kept for reuse
        under ``cache_key`` when the body was clean, with the fresh symbols they hold, made since
        the symbol table's count was ``symbols_before``)."""
        outermost = len(self._chain) == 1
        for error in inner:
            message = f"in function '{function.proto.name}': {error}"
            self.walker.fail(errors, index, node, short_chain(message) if outermost else message, strict,
                             severity=error.severity, of_form=error.of_form)
        result = ([types.get(name) for name in function.outputs], [datas.get(name) for name in function.outputs])
        if cache_key is not None and not inner \
                and (made := kept_names(result, self.walker.symbols, symbols_before)) is not None:
            function.results[cache_key] = (result, made)
        return result


def _result_key(function: FunctionInfo, inputs: list[Any], data: list[Any]) -> Any:
    """The key a call's result is kept under (None: the result is not kept)."""
    if function.has_refs:
        return None
    try:
        key = (tuple(inputs), tuple(data))
        hash(key)
    except TypeError:
        return None
    return key


def _body_scope(function: FunctionInfo, inputs: list[Any], data: list[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The types and data the body starts from: the call's inputs, then what the body declares."""
    types = {name: value for name, value in zip(function.inputs, inputs) if name and value is not None}
    datas = {name: value for name, value in zip(function.inputs, data) if name and value is not None}
    for name, value in function.declared_types().items():
        types.setdefault(name, value)
    return types, datas


__all__ = ["CallResult", "FunctionCalls", "FunctionInfo"]
