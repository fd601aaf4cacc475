"""Type and shape inference: rule context, abstract values and the graph engine.

Submodules are imported on demand; this package imports nothing itself.
"""
