"""Bodies of RotaryEmbedding and Attention, which onnx builds per node."""
from __future__ import annotations

import math

from opspec.runtime.contract.elements import ElementType
from opspec.runtime.convert.emitter import Emitter, element_of
from opspec.runtime.convert.values import GraphValues, Refusal
from opspec.runtime.convert.work_node import WorkNode
from opspec.runtime.schema import OpSchema


def rotary_embedding(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Rotation of feature pairs by cached angles, on a (batch, sequence, heads, head size) view."""
    known = values.type_of(node.inputs[0])
    heads = node.value("num_heads") or 0
    if known is None or known.dims is None or known.rank not in (3, 4) or known.dims[-1] is None:
        raise Refusal("the input's rank or last dim is unknown")
    head_size = known.dims[-1] if known.rank == 4 else (known.dims[-1] // heads if heads else 0)
    if not head_size:
        raise Refusal("a 3-D input needs num_heads")
    rotated_dim = node.value("rotary_embedding_dim") or head_size
    half = rotated_dim // 2
    emit = Emitter(node, values)
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


def heads_first(emit: Emitter, x: str, rank: int, heads: int) -> str:
    """(batch, heads, sequence, head size) from a 4-D input as it is or a 3-D one with heads folded in."""
    if rank == 4:
        return x
    return emit("Transpose", emit("Reshape", x, emit.ints("split_heads", [0, 0, heads, -1])), perm=[0, 2, 1, 3])


def repeat_heads(emit: Emitter, x: str, repeat: str, heads: int) -> str:
    """Each of the key or value heads repeated for the query heads that share it."""
    shape = emit("Shape", x)
    grouped = emit("Concat", emit.last(shape, 0, 0, 1), emit.ints("heads", [heads]), emit.last(shape, 0, 2, 4), axis=0)
    return emit("Reshape", emit("Tile", emit("Unsqueeze", x, emit.ints("at", [2])), repeat), grouped)


def attention(node: WorkNode, schema: OpSchema, values: GraphValues) -> list[WorkNode]:
    """Scaled dot-product attention: softmax(Q K^T * scale + mask) V, keys and values after their past
    caches, where a row that the mask blocks entirely gives zeros."""
    inputs = node.inputs + [""] * (6 - len(node.inputs))
    outputs = node.outputs + [""] * (4 - len(node.outputs))
    cached = bool(inputs[4] and inputs[5])
    if any(inputs[6:]) or outputs[3] or inputs[4] != inputs[4] or bool(inputs[4]) != bool(inputs[5]):
        raise Refusal("sequence lengths and the product output are not expanded")
    if cached and node.value("is_causal"):
        raise Refusal("a causal mask over a cache is not expanded")
    if (outputs[1] or outputs[2]) and not cached:
        raise Refusal("present caches without past ones are not expanded")
    elem = element_of(node, values)
    if node.value("softmax_precision") not in (None, elem):
        raise Refusal("a softmax precision other than the input's is not expanded")
    query, key = values.type_of(inputs[0]), values.type_of(inputs[1])
    if query is None or key is None or query.dims is None or key.dims is None or query.rank not in (3, 4) \
            or key.rank != query.rank:
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
    emit = Emitter(node, values)
    q = heads_first(emit, inputs[0], query.rank, q_heads)
    k = heads_first(emit, inputs[1], query.rank, kv_heads)
    v = heads_first(emit, inputs[2], query.rank, kv_heads)
    if cached:
        k = emit("Concat", inputs[4], k, axis=2, out=outputs[1] or None)
        v = emit("Concat", inputs[5], v, axis=2, out=outputs[2] or None)
    if q_heads != kv_heads:
        repeat = emit.ints("repeat", [1, 1, q_heads // kv_heads, 1, 1])
        k, v = (repeat_heads(emit, t, repeat, q_heads) for t in (k, v))
    scores = emit("Mul", emit("MatMul", q, emit("Transpose", k, perm=[0, 1, 3, 2])), emit.scalar("scale", elem, scale))
    softcap = node.value("softcap")
    if softcap:
        cap = emit.scalar("softcap", elem, softcap)
        scores = emit("Mul", emit("Tanh", emit("Div", scores, cap)), cap)
    zero, blocked = emit.scalar("zero", elem, 0.0), emit.scalar("blocked", elem, float("-inf"))
    if inputs[3]:
        mask = values.type_of(inputs[3])
        if mask is None:
            raise Refusal("the mask's type is unknown")
        bias = emit("Where", inputs[3], zero, blocked) if mask.elem == ElementType.BOOL else \
            (inputs[3] if mask.elem == elem else emit("Cast", inputs[3], to=elem))
        scores = emit("Add", scores, bias)
    if node.value("is_causal"):
        lengths = [emit("Gather", emit("Shape", t), emit.ints("sequence_axis", [2]), axis=0) for t in (q, k)]
        ones = emit("Expand", emit.scalar("one", elem, 1.0), emit("Concat", *lengths, axis=0))
        allowed = emit("Cast", emit("Trilu", ones, upper=0), to=ElementType.BOOL)
        scores = emit("Add", scores, emit("Where", allowed, zero, blocked))
    weights = emit("Softmax", scores, axis=-1)
    if inputs[3]:  # a row the mask blocks entirely attends to nothing: zeros, not the NaN softmax gives
        dead = emit("Equal", emit("ReduceMax", scores, axes=[-1]), blocked)
        weights = emit("Where", dead, zero, weights)
    weighted = emit("MatMul", weights, v, out=node.outputs[0] if query.rank == 4 else None)
    if query.rank == 3:
        emit("Reshape", emit("Transpose", weighted, perm=[0, 2, 1, 3]), emit.ints("fold_heads", [0, 0, -1]),
             out=node.outputs[0])
    return emit.nodes
