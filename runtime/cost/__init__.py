"""What a model costs: MACs, FLOPs, parameters and memory, as formulas of its input symbols.

:func:`cost` (``opspec.cost``) gives a :class:`CostReport`; ``opspec cost MODEL`` prints it.
"""
from .measures import Cost
from .model_cost import cost
from .report import CostReport, KVCache, NodeCost, OpTypeCost, ValueSize

__all__ = ["Cost", "CostReport", "KVCache", "NodeCost", "OpTypeCost", "ValueSize", "cost"]
