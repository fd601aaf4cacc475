"""What a model costs: MACs, FLOPs, parameters and memory, as formulas of its input symbols.

:func:`cost` (``opspec.cost``) gives a :class:`CostReport`; ``opspec cost MODEL`` prints it. The
vocabulary of the op files' ``cost`` blocks is in :mod:`.kinds`, which the compiler reads without
loading inference (so names are loaded on first use).
"""
from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .measures import Cost
    from .model_cost import cost
    from .report import CostReport, KVCache, NodeCost, OpTypeCost, ValueSize

_EXPORTS = {"Cost": ".measures", "cost": ".model_cost", "CostReport": ".report", "KVCache": ".report",
            "NodeCost": ".report", "OpTypeCost": ".report", "ValueSize": ".report"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
