"""The models a conformance case is inferred on: as the suite ships it, or as exporters write it."""
from __future__ import annotations

from typing import Any

#: numpy integer kinds that exported models carry as constants (shapes, axes, sizes, k, ...).
CONSTANT_DTYPES = ("int32", "int64")


def stripped(model: Any) -> Any:
    """A copy of ``model`` whose graph outputs carry no type."""
    copy = type(model)()
    copy.CopyFrom(model)
    for output in copy.graph.output:
        output.ClearField("type")
    return copy


def with_int_initializers(model: Any, inputs: list[Any]) -> Any:
    """``model`` (outputs stripped) with every int32/int64 tensor input turned into an initializer.

    ``inputs`` are the case's input values, in graph-input order. The inputs become initializers
    and leave the graph's input list, as exporters write constant shapes, axes and sizes.
    """
    import numpy as np
    from onnx import numpy_helper

    copy = stripped(model)
    kept = []
    for graph_input, value in zip(list(copy.graph.input), inputs):
        if isinstance(value, (np.ndarray, np.generic)) and value.dtype.name in CONSTANT_DTYPES:
            # numpy scalars too: the suite passes a window's size or Range's bounds as ``np.int32(10)``
            copy.graph.initializer.append(numpy_helper.from_array(np.asarray(value), graph_input.name))
        else:
            kept.append(graph_input)
    kept.extend(list(copy.graph.input)[len(inputs):])
    del copy.graph.input[:]
    copy.graph.input.extend(kept)
    if copy.ir_version < 4:
        copy.ir_version = 4  # initializers outside the input list need IR 4
    return copy


#: Variant name -> how a case's model is prepared from (model, input values).
VARIANTS = {
    "as shipped": lambda model, inputs: stripped(model),
    "int inputs as initializers": with_int_initializers,
}

__all__ = ["CONSTANT_DTYPES", "VARIANTS", "stripped", "with_int_initializers"]
