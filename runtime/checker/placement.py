"""Where each node of a model runs on an onnxruntime provider that falls back to the CPU, and the
copies between devices that follow.

onnxruntime gives a provider such as CUDA every node it has a kernel for and leaves the others to
the CPU provider; a value made on one device and read on the other is copied across (one copy per
value and direction, whatever the number of readers). Graph inputs arrive in host memory and
graph outputs leave through it, so a graph input a CUDA node reads, or a graph output a CUDA node
makes, is copied too. Initializers are placed where they are read once, when the session is made,
and are not counted.

The prediction rests on the kernel tables alone (no device is needed or asked). It does not model
onnxruntime's preference for running small shape computations on the CPU (which rests on the
memory each CUDA kernel takes its inputs in, which no table here records), graph optimizations
that fuse nodes, or subgraphs (an If or Loop body is placed with its node).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Iterable

from opspec.runtime.checker.runtime_support import DEFAULT_PROVIDER, KERNEL_CODES, needs_no_kernel, taken_by

#: Where graph inputs come from and graph outputs go: host memory, the CPU provider's.
HOST = DEFAULT_PROVIDER


class Placed(enum.Enum):
    """How a node is placed."""

    #: A kernel of the provider asked for takes it.
    PROVIDER = "provider"
    #: The provider has no kernel for it; the CPU provider runs it.
    FALLBACK = "fallback"
    #: Neither has a kernel: the model does not load.
    NO_KERNEL = "no-kernel"
    #: It becomes an initializer when the graph is loaded (a Constant, a Shape of a known shape).
    INITIALIZER = "initializer"
    #: No kernel takes it and it runs through its function body (or a model-local function's),
    #: whose nodes onnxruntime places one by one when it loads the graph; not followed here.
    EXPANDED = "expanded"
    #: Not placed by this prediction: an op opspec has no schema for at the model's opset.
    NOT_PLACED = "not-placed"


@dataclass(frozen=True)
class NodePlacement:
    """One node of the main graph: its position, name, op and domain, and where it runs (``provider``
    None when it runs nowhere or is not placed)."""

    index: int
    name: str
    op: str
    domain: str
    provider: str | None
    how: Placed

    @property
    def label(self) -> str:
        return f"node '{self.name}'" if self.name else f"node #{self.index}"


@dataclass(frozen=True)
class Copy:
    """One value copied between devices: from the provider that makes it to the one that reads it,
    the node that makes it (``None``: a graph input) and those that read it (``None`` among them: a
    graph output), its type and shape where inference knows them, and its size in bytes when the
    whole shape is known."""

    value: str
    source: str
    target: str
    producer: str | None
    consumers: tuple[str | None, ...]
    type: str | None
    shape: tuple[Any, ...] | None
    size: int | None


@dataclass(frozen=True)
class Placement:
    """The placement of a model's main graph on ``provider`` with the CPU as fallback."""

    provider: str
    nodes: tuple[NodePlacement, ...]
    copies: tuple[Copy, ...]

    def count(self, how: Placed) -> int:
        return sum(node.how is how for node in self.nodes)

    def lines(self) -> list[str]:
        """The placement as text: a summary line, then each node and each copy."""
        known = [copy.size for copy in self.copies if copy.size is not None]
        summary = (f"placement on onnxruntime:{self.provider}: {self.count(Placed.PROVIDER)} on {self.provider}, "
                   f"{self.count(Placed.FALLBACK)} on {HOST}")
        for how, what in ((Placed.NO_KERNEL, "with no kernel"), (Placed.INITIALIZER, "made initializers"),
                          (Placed.EXPANDED, "expanded"), (Placed.NOT_PLACED, "not placed")):
            if self.count(how):
                summary += f", {self.count(how)} {what}"
        summary += f"; {len(self.copies)} cop{'y' if len(self.copies) == 1 else 'ies'} between devices"
        if known:
            summary += f" ({sum(known):,} bytes in the {len(known)} of known size)"
        out = [summary]
        out += [f"  {node.label} ({node.op}): {node.provider or '-'}"
                + ("" if node.how in (Placed.PROVIDER, Placed.FALLBACK) else f" ({node.how.value})")
                for node in self.nodes]
        for copy in self.copies:
            shape = "" if copy.shape is None else f", [{', '.join(str(dim) for dim in copy.shape)}]"
            size = "" if copy.size is None else f", {copy.size:,} bytes"
            out.append(f"  copy '{copy.value}' {copy.source} -> {copy.target} ({copy.type or 'type unknown'}{shape}"
                       f"{size}): from {copy.producer or 'the graph input'} to "
                       f"{', '.join(reader or 'the graph output' for reader in copy.consumers)}")
        return out

    def json(self) -> dict[str, Any]:
        """The placement for scripts: ``placement`` (one entry per node) and ``copies``."""
        return {
            "placement": [{"index": node.index, "node": node.name, "op_type": node.op, "domain": node.domain,
                           "provider": node.provider, "how": node.how.value} for node in self.nodes],
            "copies": [{"value": copy.value, "from": copy.source, "to": copy.target, "producer": copy.producer,
                        "consumers": list(copy.consumers), "type": copy.type,
                        "shape": None if copy.shape is None else [dim if isinstance(dim, int) else str(dim)
                                                                   for dim in copy.shape],
                        "bytes": copy.size} for copy in self.copies],
        }


def place(model: Any, type_of: Any, provider: str, cpu_problems: Iterable[Any]) -> Placement:
    """The placement of ``model``'s main graph on ``provider``; ``type_of(name)`` gives a value's
    inferred type (None: unknown) and ``cpu_problems`` are the CPU provider's prediction's problems
    (a node the CPU cannot run either has no kernel)."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.registry import SchemaError

    taken = taken_by(model, type_of, provider)
    on_cpu = taken_by(model, type_of, HOST)
    failing = {problem.index for problem in cpu_problems if problem.code in KERNEL_CODES}
    local = {(function.domain, function.name) for function in model.functions}
    known = _resolver(model)
    nodes = []
    for index, node in enumerate(model.graph.node):
        try:
            domain = INFERENCE.domain(INFERENCE.canonical_domain(node.domain)).name
        except SchemaError:
            domain = node.domain or "ai.onnx"
        if index in taken:
            where, how = provider, Placed.PROVIDER
        elif (node.domain, node.op_type) in local:
            where, how = None, Placed.EXPANDED
        elif not known(node):
            where, how = None, Placed.NOT_PLACED
        elif needs_no_kernel(node, domain, type_of):
            where, how = None, Placed.INITIALIZER
        elif index in failing:
            where, how = None, Placed.NO_KERNEL
        elif index in on_cpu:
            where, how = HOST, Placed.FALLBACK
        else:
            where, how = None, Placed.EXPANDED
        nodes.append(NodePlacement(index, node.name, node.op_type, domain, where, how))
    return Placement(provider, tuple(nodes), _copies(model, nodes, type_of))


def _resolver(model: Any) -> Any:
    """``known(node)``: whether opspec has a schema for the node at the model's opset of its domain
    (a domain onnxruntime knows and the model does not import: the runtime's newest)."""
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.inference.resolve import normalize_opsets
    from opspec.runtime.kernels import limits
    from opspec.runtime.registry import SchemaError

    opsets = normalize_opsets(model.opset_import)
    for domain, newest in limits(HOST)[1].items():
        opsets.setdefault("" if domain == "ai.onnx" else domain, newest)

    def known(node: Any) -> bool:
        try:
            domain = INFERENCE.canonical_domain(node.domain)
            INFERENCE.get_schema(node.op_type, opsets.get(domain), domain)
        except SchemaError:
            return False
        return True

    return known


def _copies(model: Any, nodes: list[NodePlacement], type_of: Any) -> tuple[Copy, ...]:
    graph = model.graph
    initializers = {tensor.name for tensor in graph.initializer} | \
        {tensor.values.name for tensor in getattr(graph, "sparse_initializer", ())}
    made: dict[str, tuple[str, str | None]] = {value.name: (HOST, None) for value in graph.input
                                               if value.name not in initializers}
    for placed, node in zip(nodes, graph.node):
        for name in node.output:
            if name and placed.provider is not None:
                made[name] = (placed.provider, placed.label)
    readers: dict[tuple[str, str], list[str | None]] = {}
    for placed, node in zip(nodes, graph.node):
        if placed.provider is None:
            continue
        for name in dict.fromkeys(node.input):
            if name in made and made[name][0] != placed.provider:
                readers.setdefault((name, placed.provider), []).append(placed.label)
    for value in graph.output:
        if value.name in made and made[value.name][0] != HOST:
            readers.setdefault((value.name, HOST), []).append(None)
    copies = []
    for (name, target), consumers in readers.items():
        source, producer = made[name]
        found = type_of(name)
        shape = tuple(found.shape) if getattr(found, "shape", None) is not None else None
        copies.append(Copy(name, source, target, producer, tuple(consumers), _type_text(found), shape,
                           _size(found)))
    return tuple(copies)


def _type_text(found: Any) -> str | None:
    from opspec.runtime.contract.values import type_string

    text = type_string(found) if found is not None else None
    return None if text is None or "?" in text else text


def _size(found: Any) -> int | None:
    """The bytes a tensor of type ``found`` takes when its element type and every dim are known."""
    from opspec.runtime.contract.elements import ELEMENT_BITS
    from opspec.runtime.contract.values import TensorType

    if not isinstance(found, TensorType) or found.shape is None or found.elem not in ELEMENT_BITS:
        return None
    count = 1
    for dim in found.shape:
        if type(dim) is not int:
            return None
        count *= dim
    return (count * ELEMENT_BITS[found.elem] + 7) // 8


__all__ = ["Copy", "HOST", "NodePlacement", "Placed", "Placement", "place"]
