"""Replace a node by its function body, for an opset where the operator does not exist.

Bodies written as data (a version's ``function``) are instantiated as they are: formal
names become the node's values, inner values get fresh names, attribute references take
the node's attribute or the schema's default. Operators whose body onnx builds per node
(``context_dependent``) have a builder here. The body's nodes are returned with the
opset they are written for; the caller converts them on to the target opset.
"""
from __future__ import annotations

import math
from typing import Callable

from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode, bind_formals, make_attribute
from opspec.runtime.schema import AttrType, OpSchema

Builder = Callable[[WorkNode, OpSchema, GraphValues], list[WorkNode]]


def expand(node: WorkNode, schema: OpSchema, target_opset: int, values: GraphValues) -> tuple[int, list[WorkNode]]:
    """``(opset of the body, its nodes)`` for ``node``, or raise :class:`Refusal`."""
    builder = BUILDERS.get((schema.domain, schema.name))
    if builder is not None:
        return builder.opset, builder.build(node, schema, values)
    if not schema.functions:
        raise Refusal(f"{schema.name} has no version at opset {target_opset} and no function body to expand")
    below = [body for body in schema.functions if body.opset <= target_opset]
    body = below[-1] if below else schema.functions[0]
    return body.opset, _instantiate(node, schema, body, values)


def _instantiate(node: WorkNode, schema: OpSchema, body, values: GraphValues) -> list[WorkNode]:
    function = schema.get_function_with_opset_version(body.opset)
    names: dict[str, str] = {"": ""}
    for formal, actuals in bind_formals(schema.inputs, node.inputs).items():
        names[formal] = actuals[0] if actuals else ""
    for formal, actuals in bind_formals(schema.outputs, node.outputs).items():
        names[formal] = actuals[0] if actuals else ""
    nodes = []
    for inner in function.node:
        if any(a.HasField("g") or a.graphs for a in inner.attribute):
            raise Refusal(f"the function body of {schema.name} holds a subgraph, which is not expanded")
        for output in inner.output:
            if output and (output not in names or not names[output]):
                names[output] = values.fresh(f"{node.outputs[0]}_{output}")
        work = WorkNode(inner.op_type, inner.domain, "", [names.get(i, i) for i in inner.input],
                        [names[o] for o in inner.output])
        for attribute in inner.attribute:
            if not attribute.ref_attr_name:
                copy = make_attribute(attribute.name, AttrType.INT, 0)
                copy.CopyFrom(attribute)
                work.attributes[attribute.name] = copy
                continue
            referred = node.attributes.get(attribute.ref_attr_name)
            default = schema.attributes.get(attribute.ref_attr_name)
            if referred is not None:
                copy = make_attribute(attribute.name, AttrType.INT, 0)
                copy.CopyFrom(referred)
                copy.name = attribute.name
                work.attributes[attribute.name] = copy
            elif default is not None and default.default is not None:
                work.set(attribute.name, default.type, default.default)
        work.name = f"{node.name}_{len(nodes)}" if node.name else ""
        nodes.append(work)
    return nodes


class _Built:
    """A builder of the body of one context-dependent operator, written for ``opset``."""

    def __init__(self, opset: int, build: Builder):
        self.opset, self.build = opset, build


def _element(node: WorkNode, values: GraphValues) -> int:
    known = values.type_of(node.inputs[0])
    if known is None:
        raise Refusal("the input's element type is unknown, so the body's constants cannot be typed")
    return known.elem


class _Emitter:
    """Writes body nodes with fresh names."""

    def __init__(self, node: WorkNode, values: GraphValues):
        self.node, self.values, self.nodes = node, values, []

    def __call__(self, op: str, *inputs: str, out: str | None = None, **attributes) -> str:
        result = out or self.values.fresh(f"{self.node.outputs[0]}_{op.lower()}")
        work = WorkNode(op, "", f"{self.node.name}_{len(self.nodes)}" if self.node.name else "",
                        list(inputs), [result])
        for name, value in attributes.items():
            kind = AttrType.INTS if isinstance(value, list) else AttrType.FLOAT if isinstance(value, float) \
                else AttrType.INT
            work.set(name, kind, value)
        self.nodes.append(work)
        return result

    def scalar(self, hint: str, elem: int, value: float) -> str:
        return self.values.add_constant(f"{self.node.outputs[0]}_{hint}", elem, (), [value])

    def ints(self, hint: str, items: list[int]) -> str:
        return self.values.add_constant(f"{self.node.outputs[0]}_{hint}", 7, (len(items),), items)

    def last(self, x: str, axis: int, start: int, end: int, step: int = 1) -> str:
        """``x[..., start:end:step]`` along ``axis`` (the last one, counted from the front)."""
        steps = [self.ints("step", [step])] if step != 1 else []
        return self("Slice", x, self.ints("start", [start]), self.ints("end", [end]), self.ints("axis", [axis]), *steps)


def _layer_normalization(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    elem = _element(node, values)
    known = values.type_of(node.inputs[0])
    axis = node.value("axis")
    axis = schema.attributes["axis"].default if axis is None else axis
    epsilon = node.value("epsilon")
    epsilon = schema.attributes["epsilon"].default if epsilon is None else epsilon
    stash = node.value("stash_type")
    stash = schema.attributes["stash_type"].default if stash is None else stash
    if axis < 0:
        axes = list(range(axis, 0))
    elif known is not None and known.rank is not None:
        axes = list(range(axis - known.rank, 0))
    else:
        raise Refusal("axis counts from the front of an input of unknown rank")
    emit = _Emitter(node, values)
    x = node.inputs[0] if stash == elem else emit("Cast", node.inputs[0], to=stash)
    mean = emit("ReduceMean", x, axes=axes)
    centred = emit("Sub", x, mean)
    variance = emit("ReduceMean", emit("Mul", centred, centred), axes=axes)
    spread = emit("Sqrt", emit("Add", variance, emit.scalar("epsilon", stash, epsilon)))
    outputs = node.outputs + [""] * (3 - len(node.outputs))
    inverse = emit("Reciprocal", spread, out=outputs[2] or None)
    normal = emit("Mul", centred, inverse)
    if stash != elem:
        normal = emit("Cast", normal, to=elem)
    has_bias = len(node.inputs) > 2 and node.inputs[2]
    scaled = emit("Mul", normal, node.inputs[1], out=None if has_bias else outputs[0])
    if has_bias:
        emit("Add", scaled, node.inputs[2], out=outputs[0])
    if outputs[1]:
        emit("Identity", mean, out=outputs[1])
    return emit.nodes


def _gelu(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    elem = _element(node, values)
    approximate = node.value("approximate") or "none"
    emit = _Emitter(node, values)
    x = node.inputs[0]
    half = emit("Mul", x, emit.scalar("half", elem, 0.5))
    if approximate == "tanh":
        cube = emit("Mul", emit("Mul", x, x), x)
        inner = emit("Add", x, emit("Mul", cube, emit.scalar("coefficient", elem, 0.044715)))
        core = emit("Tanh", emit("Mul", inner, emit.scalar("scale", elem, math.sqrt(2 / math.pi))))
    elif approximate == "none":
        core = emit("Erf", emit("Mul", x, emit.scalar("scale", elem, 1 / math.sqrt(2))))
    else:
        raise Refusal(f"approximate = {approximate!r} is not a form of Gelu")
    emit("Mul", half, emit("Add", core, emit.scalar("one", elem, 1.0)), out=node.outputs[0])
    return emit.nodes


def _stash_settings(node: WorkNode, schema: OpSchema, values: GraphValues) -> tuple[int, int, float]:
    """(element type, stash element type, epsilon) of a normalization node."""
    elem = _element(node, values)
    stash = node.value("stash_type")
    stash = schema.attributes["stash_type"].default if stash is None and "stash_type" in schema.attributes else stash
    epsilon = node.value("epsilon")
    epsilon = schema.attributes["epsilon"].default if epsilon is None else epsilon
    return elem, stash or elem, epsilon


def _rms_normalization(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    elem, stash, epsilon = _stash_settings(node, schema, values)
    known = values.type_of(node.inputs[0])
    axis = node.value("axis")
    axis = schema.attributes["axis"].default if axis is None else axis
    if axis >= 0 and (known is None or known.rank is None):
        raise Refusal("axis counts from the front of an input of unknown rank")
    axes = list(range(axis, 0)) if axis < 0 else list(range(axis - known.rank, 0))
    emit = _Emitter(node, values)
    x = node.inputs[0] if stash == elem else emit("Cast", node.inputs[0], to=stash)
    mean_square = emit("ReduceMean", emit("Mul", x, x), axes=axes)
    inverse = emit("Reciprocal", emit("Sqrt", emit("Add", mean_square, emit.scalar("epsilon", stash, epsilon))))
    normal = emit("Mul", x, inverse)
    if stash != elem:
        normal = emit("Cast", normal, to=elem)
    emit("Mul", normal, node.inputs[1], out=node.outputs[0])
    return emit.nodes


def _group_normalization(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Version 18 scales each group, version 21 each channel."""
    elem, stash, epsilon = _stash_settings(node, schema, values)
    groups = node.value("num_groups")
    known = values.type_of(node.inputs[0])
    per_channel = schema.since_version >= 21
    if per_channel and (known is None or known.rank is None):
        raise Refusal("the input's rank is unknown, so the channel scale cannot be laid out")
    emit = _Emitter(node, values)
    x = node.inputs[0] if stash == elem else emit("Cast", node.inputs[0], to=stash)
    grouped = emit("Reshape", x, values.add_constant(f"{node.outputs[0]}_grouped", 7, (3,), [0, groups, -1]))
    mean = emit("ReduceMean", grouped, axes=[2])
    centred = emit("Sub", grouped, mean)
    variance = emit("ReduceMean", emit("Mul", centred, centred), axes=[2])
    normal = emit("Div", centred, emit("Sqrt", emit("Add", variance, emit.scalar("epsilon", stash, epsilon))))
    if stash != elem:
        normal = emit("Cast", normal, to=elem)
    whole = emit("Shape", node.inputs[0])
    if per_channel:
        normal = emit("Reshape", normal, whole)
        layout = values.add_constant(f"{node.outputs[0]}_layout", 7, (known.rank - 1,), [-1] + [1] * (known.rank - 2))
    else:
        layout = values.add_constant(f"{node.outputs[0]}_layout", 7, (2,), [-1, 1])
    scaled = emit("Mul", normal, emit("Reshape", node.inputs[1], layout))
    shifted = emit("Add", scaled, emit("Reshape", node.inputs[2], layout), out=node.outputs[0] if per_channel else None)
    if not per_channel:
        emit("Reshape", shifted, whole, out=node.outputs[0])
    return emit.nodes


def _rotary_embedding(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Rotation of feature pairs by cached angles, on a (batch, sequence, heads, head size) view."""
    known = values.type_of(node.inputs[0])
    heads = node.value("num_heads") or 0
    if known is None or known.rank not in (3, 4) or known.dims[-1] is None:
        raise Refusal("the input's rank or last dim is unknown")
    head_size = known.dims[-1] if known.rank == 4 else (known.dims[-1] // heads if heads else 0)
    if not head_size:
        raise Refusal("a 3-D input needs num_heads")
    rotated_dim = node.value("rotary_embedding_dim") or head_size
    half = rotated_dim // 2
    emit = _Emitter(node, values)
    x = node.inputs[0]
    x = emit("Transpose", x, perm=[0, 2, 1, 3]) if known.rank == 4 else \
        emit("Reshape", x, emit.ints("heads", [0, 0, heads, head_size]))
    part = emit.last(x, 3, 0, rotated_dim)
    caches = []
    for cache in node.inputs[1:3]:
        if len(node.inputs) > 3 and node.inputs[3]:
            cache = emit("Gather", cache, node.inputs[3], axis=0)
        caches.append(emit("Unsqueeze", emit.last(cache, 2, 0, half), emit.ints("at", [2])))
    cos, sin = caches
    if node.value("interleaved"):
        first, second = emit.last(part, 3, 0, rotated_dim, 2), emit.last(part, 3, 1, rotated_dim, 2)
    else:
        first, second = emit.last(part, 3, 0, half), emit.last(part, 3, half, rotated_dim)
    real = emit("Sub", emit("Mul", cos, first), emit("Mul", sin, second))
    imaginary = emit("Add", emit("Mul", sin, first), emit("Mul", cos, second))
    if node.value("interleaved"):
        pairs = emit("Concat", emit("Unsqueeze", real, emit.ints("at", [4])),
                     emit("Unsqueeze", imaginary, emit.ints("at", [4])), axis=4)
        turned = emit("Reshape", pairs, emit("Shape", part))
    else:
        turned = emit("Concat", real, imaginary, axis=3)
    if rotated_dim < head_size:
        turned = emit("Concat", turned, emit.last(x, 3, rotated_dim, head_size), axis=3)
    if known.rank == 4:
        emit("Transpose", turned, out=node.outputs[0], perm=[0, 2, 1, 3])
    else:
        emit("Reshape", turned, emit("Shape", node.inputs[0]), out=node.outputs[0])
    return emit.nodes


def _heads_first(emit: _Emitter, x: str, rank: int, heads: int) -> str:
    """(batch, heads, sequence, head size) from a 4-D input as it is or a 3-D one with heads folded in."""
    if rank == 4:
        return x
    return emit("Transpose", emit("Reshape", x, emit.ints("split_heads", [0, 0, heads, -1])), perm=[0, 2, 1, 3])


def _repeat_heads(emit: _Emitter, x: str, repeat: str, heads: int) -> str:
    """Each of the key or value heads repeated for the query heads that share it."""
    shape = emit("Shape", x)
    grouped = emit("Concat", emit.last(shape, 0, 0, 1), emit.ints("heads", [heads]), emit.last(shape, 0, 2, 4), axis=0)
    return emit("Reshape", emit("Tile", emit("Unsqueeze", x, emit.ints("at", [2])), repeat), grouped)


def _attention(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Scaled dot-product attention without caches: softmax(Q K^T * scale + mask) V."""
    inputs = node.inputs + [""] * (6 - len(node.inputs))
    if any(inputs[4:]) or any(node.outputs[1:]):
        raise Refusal("caches, sequence lengths and the extra outputs are not expanded")
    if node.value("softcap"):
        raise Refusal("softcap is not expanded")
    elem = _element(node, values)
    if node.value("softmax_precision") not in (None, elem):
        raise Refusal("a softmax precision other than the input's is not expanded")
    query, key = values.type_of(inputs[0]), values.type_of(inputs[1])
    if query is None or key is None or query.rank not in (3, 4) or key.rank != query.rank:
        raise Refusal("the ranks of Q and K are unknown")
    q_heads, kv_heads = node.value("q_num_heads"), node.value("kv_num_heads")
    if query.rank == 4:
        q_heads, kv_heads, head_size = query.dims[1], key.dims[1], key.dims[3]
    else:
        head_size = key.dims[2] // kv_heads if key.dims[2] and kv_heads else None
    if head_size is None or not q_heads or not kv_heads or q_heads % kv_heads:
        raise Refusal("the head counts or the head size are unknown")
    scale = node.value("scale")
    scale = scale if scale is not None else 1 / math.sqrt(head_size)
    emit = _Emitter(node, values)
    q = _heads_first(emit, inputs[0], query.rank, q_heads)
    k = _heads_first(emit, inputs[1], query.rank, kv_heads)
    v = _heads_first(emit, inputs[2], query.rank, kv_heads)
    if q_heads != kv_heads:
        repeat = emit.ints("repeat", [1, 1, q_heads // kv_heads, 1, 1])
        k, v = (_repeat_heads(emit, t, repeat, q_heads) for t in (k, v))
    scores = emit("Mul", emit("MatMul", q, emit("Transpose", k, perm=[0, 1, 3, 2])), emit.scalar("scale", elem, scale))
    zero, blocked = emit.scalar("zero", elem, 0.0), emit.scalar("blocked", elem, float("-inf"))
    if inputs[3]:
        mask = values.type_of(inputs[3])
        if mask is None:
            raise Refusal("the mask's type is unknown")
        if mask.elem == 9:
            raise Refusal("a boolean mask may block a whole row, which Attention answers with zeros")
        scores = emit("Add", scores, inputs[3] if mask.elem == elem else emit("Cast", inputs[3], to=elem))
    if node.value("is_causal"):
        lengths = [emit("Gather", emit("Shape", t), emit.ints("sequence_axis", [2]), axis=0) for t in (q, k)]
        ones = emit("Expand", emit.scalar("one", elem, 1.0), emit("Concat", *lengths, axis=0))
        allowed = emit("Cast", emit("Trilu", ones, upper=0), to=9)
        scores = emit("Add", scores, emit("Where", allowed, zero, blocked))
    weighted = emit("MatMul", emit("Softmax", scores, axis=-1), v, out=node.outputs[0] if query.rank == 4 else None)
    if query.rank == 3:
        emit("Reshape", emit("Transpose", weighted, perm=[0, 2, 1, 3]), emit.ints("fold_heads", [0, 0, -1]),
             out=node.outputs[0])
    return emit.nodes


def _split_count(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Split into ``num_outputs`` chunks of ceil(length / count) (the last one smaller) as Slices,
    for an axis whose length is known only at run time."""
    count = node.value("num_outputs")
    if not count or (len(node.inputs) > 1 and node.inputs[1]):
        raise Refusal("only a split into num_outputs chunks is expanded")
    axis = node.value("axis") or 0
    emit = _Emitter(node, values)
    length = emit("Gather", emit("Shape", node.inputs[0]), emit.ints("axis", [axis]), axis=0)
    chunk = emit("Div", emit("Add", length, emit.ints("round_up", [count - 1])), emit.ints("count", [count]))
    bounds = [emit("Mul", chunk, emit.ints("index", [index])) for index in range(count + 1)]
    for index, output in enumerate(node.outputs):
        if output:
            emit("Slice", node.inputs[0], bounds[index], bounds[index + 1], emit.ints("axes", [axis]), out=output)
    return emit.nodes


def _trilu(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Trilu as a mask of the last two axes: keep (i, j) where j - i >= k (upper) or <= k (lower)."""
    known = values.type_of(node.inputs[0])
    if known is None or known.rank is None or known.rank < 2 or known.elem == 9:
        raise Refusal("the input's rank is unknown, or it is boolean")
    rank = known.rank
    emit = _Emitter(node, values)
    shape = emit("Shape", node.inputs[0])
    zero, one = emit.scalar("zero", 7, 0), emit.scalar("one", 7, 1)
    rows = emit("Range", zero, emit("Squeeze", emit.last(shape, 0, rank - 2, rank - 1), emit.ints("at", [0])), one)
    columns = emit("Range", zero, emit("Squeeze", emit.last(shape, 0, rank - 1, rank), emit.ints("at", [0])), one)
    offset = emit("Sub", emit("Unsqueeze", columns, emit.ints("at", [0])), emit("Unsqueeze", rows, emit.ints("at", [1])))
    k = node.inputs[1] if len(node.inputs) > 1 and node.inputs[1] else emit.scalar("k", 7, 0)
    k = emit("Reshape", k, emit.ints("scalar", [1, 1]))
    upper = node.value("upper")
    keep = emit("Not", emit("Less", offset, k)) if upper is None or upper else emit("Not", emit("Greater", offset, k))
    emit("Where", keep, node.inputs[0], emit("Sub", node.inputs[0], node.inputs[0]), out=node.outputs[0])
    return emit.nodes


def _shape_range(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Shape with ``start``/``end`` (version 15) as Shape, then Slice."""
    start, end = node.value("start") or 0, node.value("end")
    emit = _Emitter(node, values)
    whole = emit("Shape", node.inputs[0])
    bounds = [values.add_constant(f"{node.outputs[0]}_{hint}", 7, (1,), [bound])
              for hint, bound in (("start", start), ("end", 2**63 - 1 if end is None else end), ("axis", 0))]
    emit("Slice", whole, *bounds, out=node.outputs[0])
    return emit.nodes


def _cast_like(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    known = values.type_of(node.inputs[1])
    if known is None:
        raise Refusal("the element type of 'target_type' is unknown")
    emit = _Emitter(node, values)
    emit("Cast", node.inputs[0], out=node.outputs[0], to=known.elem)
    return emit.nodes


BUILDERS: dict[tuple[str, str], _Built] = {
    ("", "LayerNormalization"): _Built(13, _layer_normalization),
    ("", "Gelu"): _Built(13, _gelu),
    ("", "Shape"): _Built(13, _shape_range),
    ("", "CastLike"): _Built(13, _cast_like),
    ("", "RMSNormalization"): _Built(13, _rms_normalization),
    ("", "Attention"): _Built(14, _attention),
    ("", "Split"): _Built(13, _split_count),
    ("", "Trilu"): _Built(13, _trilu),
    ("", "RotaryEmbedding"): _Built(13, _rotary_embedding),
    ("", "GroupNormalization"): _Built(13, _group_normalization),
}
