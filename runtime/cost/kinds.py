"""The vocabulary of the ``cost`` block of an op version: its measures, named cost kinds, and the
costs computed in code.

A cost kind is a set of formulas (``opspec.runtime.formula``) written with positional references
(``input(0)``, ``output(0)``), so one kind serves every operator of a family. A version's block
names a kind, gives formulas of its own (which replace the kind's for the same measure), names
a cost computed in code (for what a formula cannot say: control flow, Einsum), or says why its
cost is unknown.
"""
from __future__ import annotations

import enum
from types import MappingProxyType

__all__ = ["BLOCK_KEYS", "CODE_COSTS", "COST_KINDS", "Measure"]


class Measure(str, enum.Enum):
    """What a cost counts. Bytes default to reading every input supplied and writing every output."""

    MACS = "macs"                      # multiply-accumulates (2 FLOPs each)
    FLOPS = "flops"                    # other arithmetic: adds, compares, scalings, not counting MACs
    TRANSCENDENTAL = "transcendental"  # exp, log, tanh, sqrt, sin, ... (each counted once, apart from flops)
    BYTES_READ = "bytes_read"
    BYTES_WRITTEN = "bytes_written"


_ELEMENTWISE_OUT = "max(1, inputs() - 1) * numel(output(0))"

COST_KINDS: MappingProxyType[str, MappingProxyType[str, str]] = MappingProxyType({
    name: MappingProxyType(formulas) for name, formulas in {
        # one operation per output element for each input past the first (Add, Sum of n, Relu, Where, Cast)
        "elementwise": {"flops": _ELEMENTWISE_OUT},
        # one transcendental function per output element (Exp, Tanh, Sqrt, Erf, Sin)
        "transcendental": {"transcendental": "numel(output(0))"},
        # one operation per element of the reduced input (ReduceSum, ArgMax, GlobalAveragePool)
        "reduction": {"flops": "numel(input(0))"},
        # data is copied, gathered or rearranged; no arithmetic (Reshape, Transpose, Concat, Gather, Pad)
        "data_movement": {},
        # only the input's shape or type is read, or nothing at all (Shape, Size, Constant, RandomNormal)
        "metadata": {"bytes_read": "0"},
    }.items()
})

#: Costs computed in code, by name, with what each does (runtime/cost/code.py implements them).
CODE_COSTS: MappingProxyType[str, str] = MappingProxyType({
    "if": "the larger cost of the two branches (each measure apart)",
    "loop": "the body's cost times the trip count input when it is a constant, else times a symbol `trips_<node>`",
    "scan": "the body's cost times the scanned axis' length",
    "einsum": "one multiply-accumulate per point of the product space of every index the equation names",
})

#: Keys a ``cost`` block may hold besides the measures.
BLOCK_KEYS = ("kind", "code", "unknown")
