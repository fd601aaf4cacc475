"""Rules for control flow: If, Loop and Scan, on the subgraph hook of the contract.

The engine infers a node's graph attributes before its rule runs (``ctx.subgraph``) and
infers them again with other input types on request (``ctx.infer_subgraph``). Types that
several paths may give (two branches, successive iterations) are relaxed as TensorFlow's
``Relax`` does: what all paths agree on is kept, anything else becomes unknown.
"""
from __future__ import annotations

from opspec.runtime.contract import (
    BOOL,
    INT64,
    InferenceContext,
    OptionalType,
    TensorType,
    attribute,
    input,
    rule,
)
from opspec.runtime.rules._relax import relax_types
from opspec.runtime.shape import Dim, Sym

#: How many times a loop body is inferred again before its carried types are given up on.
_FIXPOINT_ROUNDS = 8
_SCALAR_INT64 = TensorType(INT64, ())
_SCALAR_BOOL = TensorType(BOOL, ())


def _elem_conflict(a, b) -> bool:
    """Whether two tensor types have different known element types (which no valid node allows)."""
    return (type(a) is TensorType and type(b) is TensorType and bool(a.elem) and bool(b.elem)
            and a.elem != b.elem)


@rule("if", "Each output covers the outputs of the branches that may run: dims they agree on are kept.",
      then_branch=attribute(), else_branch=attribute(), cond=input())
def if_(ctx: InferenceContext) -> None:
    then, other = ctx.subgraph(ctx.named("then_branch")), ctx.subgraph(ctx.named("else_branch"))
    if then is None or other is None:
        return
    for name, branch in (("then_branch", then), ("else_branch", other)):
        if len(branch.outputs) != ctx.output_count:
            ctx.fail(f"{name} has {len(branch.outputs)} outputs but the node has {ctx.output_count}")
    # A branch not taken never runs: what would go wrong in its values is a note, not an error;
    # with the condition unknown, either branch may not run.
    taken = _condition(ctx)
    if taken is not False:
        ctx.may_not_run(ctx.named("else_branch"))
    if taken is not True:
        ctx.may_not_run(ctx.named("then_branch"))
    for index, (a, b) in enumerate(zip(then.outputs, other.outputs)):
        if _elem_conflict(a, b):
            ctx.fail(f"output {index}: the branches give element types {a.elem} and {b.elem}")
        if taken is not None:  # only the branch taken gives the outputs
            known = a if taken else b
            if known is not None:
                ctx.set_output(index, known)
        elif a is not None and b is not None:
            ctx.set_output(index, relax_types(a, b))
        else:  # a branch whose output is unknown could give any shape: keep only the element type
            known = a if a is not None else b
            if type(known) is TensorType and known.elem:
                ctx.set_output(index, TensorType(known.elem, None))


def _condition(ctx: InferenceContext) -> bool | None:
    """The If's condition when known (propagated data of a one-element tensor), else None."""
    name = ctx.named("cond")
    index = ctx.input_index(name) if name is not None else None
    values = ctx.input_values(index) if index is not None else None
    if values is None or len(values) != 1 or type(values[0]) not in (bool, int):
        return None
    return bool(values[0])


def _carry(initial, produced):
    """The type covering a carried value before and after one more iteration.

    An optional initial value that the body hands on as its element (a loop that starts
    from "none yet" and builds a sequence) carries the element's type: every iteration after
    the first gives the element (the body, declaring an optional, reads it as one holding it)."""
    if type(initial) is OptionalType and produced is not None and type(produced) is not OptionalType:
        return relax_types(initial.elem, produced)
    return relax_types(initial, produced)


def _settle(ctx: InferenceContext, carried: tuple, first_out: int, before: tuple = (), after: tuple = ()):
    """Infer the body (inputs: ``before``, the carried values, ``after``) until the carried
    types stop changing; the last body result and the carried types, each covering the
    initial value and every iteration's (carried outputs start at ``first_out``)."""
    body = ctx.named("body")
    for _ in range(_FIXPOINT_ROUNDS):
        result = ctx.infer_subgraph(body, before + carried + after)
        if result is None:
            return None, carried
        outputs = result.outputs[first_out:first_out + len(carried)]
        if len(outputs) != len(carried):
            ctx.fail(f"the body gives {len(result.outputs)} outputs, too few for {len(carried)} carried values")
        relaxed = tuple(_carry(c, o) for c, o in zip(carried, outputs))
        if relaxed == carried:
            return result, carried
        carried = relaxed
    unknown = tuple(None for _ in carried)
    return ctx.infer_subgraph(body, before + unknown + after), unknown


def _stacked(value, count, axis: int = 0):
    """A per-iteration tensor type stacked ``count`` times along a new ``axis``."""
    if type(value) is not TensorType:
        return None
    if value.shape is None:
        return TensorType(value.elem, None)
    if not -len(value.shape) - 1 <= axis <= len(value.shape):
        return None
    if axis < 0:
        axis += len(value.shape) + 1
    return TensorType(value.elem, value.shape[:axis] + (count,) + value.shape[axis:])


@rule("loop", "Carried values relaxed over the iterations; scan outputs stacked along a new leading trip axis.",
      body=attribute())
def loop(ctx: InferenceContext) -> None:
    if _runs_no_iteration(ctx):  # a body that never runs: what would fail in it is a note
        ctx.may_not_run(ctx.named("body"))
    carried = tuple(ctx.input_type(i) for i in range(2, ctx.input_count))
    result, carried = _settle(ctx, carried, 1, before=(_SCALAR_INT64, _SCALAR_BOOL))
    if result is None:
        return
    scans = result.outputs[1 + len(carried):]
    if len(carried) + len(scans) != ctx.output_count:
        ctx.fail(f"the body gives {len(carried)} carried values and {len(scans)} scan outputs, "
                 f"but the node has {ctx.output_count} outputs")
    for index, value in enumerate(carried):
        ctx.set_output(index, value)
    trips: Dim = None
    if ctx.has_input("M") and not ctx.has_input("cond"):  # a for loop: exactly M iterations
        values = ctx.input_values("M")
        if values is not None and len(values) == 1:
            if type(values[0]) is int:
                trips = max(values[0], 0)  # a negative count runs no iteration
            elif type(values[0]) is Sym:
                trips = values[0]
    if trips is None and scans:
        trips = ctx.fresh_dim()  # how many iterations run depends on the data
    for offset, value in enumerate(scans):
        ctx.set_output(len(carried) + offset, _stacked(value, trips))


def _runs_no_iteration(ctx: InferenceContext) -> bool:
    """Whether a Loop is known to stop before its first iteration: a trip count of at most 0,
    or a condition known false. (Any other body counts as running: a body that fails whenever
    it runs would leave its loop only zero iterations to do.)"""
    for index, stops in ((0, lambda value: value <= 0), (1, lambda value: not value)):
        values = ctx.input_values(index) if ctx.has_input(index) else None
        if values is not None and len(values) == 1 and type(values[0]) in (int, bool) and stops(values[0]):
            return True
    return False


def _axes(ctx: InferenceContext, key: str, count: int) -> tuple:
    axes = ctx.ints_attr(key)
    if axes is None:
        return (0,) * count
    if len(axes) != count:
        ctx.fail(f"{ctx.named(key)} has {len(axes)} entries for {count} values")
    return tuple(axes)


@rule("scan", "Final state relaxed over the steps; scan outputs stacked along their axes, one slice per step.",
      body=attribute(), num_scan_inputs=attribute(), scan_input_axes=attribute(), scan_output_axes=attribute(),
      sequence_lens=input())
def scan(ctx: InferenceContext) -> None:
    batched = ctx.declares("sequence_lens")  # the first version: a leading batch axis everywhere
    first = 1 if batched else 0
    values = tuple(ctx.input_type(i) for i in range(first, ctx.input_count))
    scan_count = ctx.int_attr("num_scan_inputs", 0)
    if not 0 < scan_count <= len(values):
        ctx.fail(f"num_scan_inputs {scan_count} does not fit {len(values)} inputs")
    states, scan_inputs = values[:len(values) - scan_count], values[len(values) - scan_count:]
    if batched:  # every value carries a leading batch axis, and scan inputs their sequence axis after it
        batch = None
        for value in values:
            if type(value) is TensorType and value.shape:
                batch = value.shape[0]
                break
        state_types = tuple(_drop_axes(value, 1) for value in states)
        slices = tuple(_drop_axes(value, 2) for value in scan_inputs)
        length = next((v.shape[1] for v in scan_inputs if type(v) is TensorType and v.shape and len(v.shape) > 1),
                      None)
    else:
        in_axes = _axes(ctx, "scan_input_axes", scan_count)
        sliced: list[TensorType | None] = []
        length = None
        for value, axis in zip(scan_inputs, in_axes):
            shape = value.shape if type(value) is TensorType else None
            if shape is None:
                sliced.append(TensorType(value.elem, None) if type(value) is TensorType else None)
                continue
            axis = ctx.normalize_axis(axis, len(shape), "scan input axis")
            length = shape[axis] if length is None else length
            sliced.append(TensorType(value.elem, shape[:axis] + shape[axis + 1:]))
        slices, state_types = tuple(sliced), states
    result, state_types = _settle(ctx, state_types, 0, after=slices)
    if result is None:
        return
    outputs = result.outputs[len(state_types):]
    if len(state_types) + len(outputs) != ctx.output_count:
        ctx.fail(f"the body gives {len(state_types) + len(outputs)} outputs, but the node has {ctx.output_count}")
    for index, value in enumerate(state_types):
        ctx.set_output(index, _stacked(value, batch) if batched else value)
    out_axes = (0,) * len(outputs) if batched else _axes(ctx, "scan_output_axes", len(outputs))
    for offset, (value, axis) in enumerate(zip(outputs, out_axes)):
        stacked = _stacked(value, length, axis)
        ctx.set_output(len(state_types) + offset, _stacked(stacked, batch) if batched else stacked)


def _drop_axes(value, count: int):
    """A tensor type without its ``count`` leading axes (a batch and a sequence axis)."""
    if type(value) is not TensorType:
        return None
    if value.shape is None or len(value.shape) < count:
        return TensorType(value.elem, None)
    return TensorType(value.elem, value.shape[count:])

