"""Model-local functions replaced by their bodies, so that their nodes convert as the graph's do.

A call's formal inputs and outputs become the call's values, inner values get names used
nowhere else, and attribute references take the call's attribute or the function's
default. Calls inside bodies are inlined in turn.
"""
from __future__ import annotations

from typing import Any

from opspec.runtime.convert.values import Refusal

#: How deep calls may nest.
_MAX_DEPTH = 16


def inline_functions(model: Any, taken: set[str]) -> None:
    """Inline every call of a model-local function in ``model`` (changed in place); ``taken``
    holds every value name in use and grows with the new ones."""
    functions = {(function.domain, function.name): function for function in model.functions}
    if not functions:
        return
    _inline_graph(model.graph, functions, taken)
    del model.functions[:]


def _inline_graph(graph: Any, functions: dict, taken: set[str]) -> None:
    """Inline the calls in ``graph`` and in every graph nested in it: a node's graphs before
    the node itself, as a call copies them, with an explicit stack (nesting is as deep as
    the model makes it). Each entry: a graph, its next node, its nodes so far, and whether
    that node's graphs are done."""
    stack: list[list[Any]] = [[graph, 0, [], False]]
    while stack:
        entry = stack[-1]
        current, index, nodes, nested_done = entry
        if index == len(current.node):
            del current.node[:]
            current.node.extend(nodes)
            stack.pop()
            continue
        node = current.node[index]
        if not nested_done:
            entry[3] = True
            nested = [sub for attribute in node.attribute
                      for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs)]
            stack += [[sub, 0, [], False] for sub in reversed(nested)]
            continue
        nodes += _expanded(node, functions, taken, 0)
        entry[1], entry[3] = index + 1, False


def _expanded(node: Any, functions: dict, taken: set[str], depth: int) -> list[Any]:
    function = functions.get((node.domain, node.op_type))
    if function is None:
        return [node]
    if depth >= _MAX_DEPTH:
        raise Refusal(f"function {function.name} calls itself or nests too deep")
    names = dict(zip(function.input, [*node.input, *[""] * len(function.input)]))
    names.update(zip(function.output, [*node.output, *[""] * len(function.output)]))
    names[""] = ""
    given = {attribute.name: attribute for attribute in node.attribute}
    defaults = {attribute.name: attribute for attribute in function.attribute_proto}
    body = []
    for inner in function.node:
        copy = type(inner)()
        copy.CopyFrom(inner)
        if any(attribute.HasField("g") or attribute.graphs for attribute in copy.attribute):
            raise Refusal(f"function {function.name} holds a subgraph, which is not inlined")
        for output in copy.output:
            if output not in names:
                names[output] = _fresh(f"{node.name or function.name}_{output}", taken)
        copy.input[:] = [names.get(name, name) for name in copy.input]
        copy.output[:] = [names[name] for name in copy.output]
        kept = []
        for attribute in copy.attribute:
            if not attribute.ref_attr_name:
                kept.append(attribute)
                continue
            source = given.get(attribute.ref_attr_name) or defaults.get(attribute.ref_attr_name)
            if source is not None:
                value = type(attribute)()
                value.CopyFrom(source)
                value.name = attribute.name
                kept.append(value)
        del copy.attribute[:]
        copy.attribute.extend(kept)
        body += _expanded(copy, functions, taken, depth + 1)
    return body


def _fresh(hint: str, taken: set[str]) -> str:
    name, count = hint, 0
    while name in taken:
        count += 1
        name = f"{hint}_{count}"
    taken.add(name)
    return name
