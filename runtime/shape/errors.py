"""The single exception type raised by the shape algebra."""


class ShapeError(ValueError):
    """Operands of a shape or dimension operation are incompatible.

    The message always quotes the operands, e.g. ``cannot merge dims 2 and 3``.
    """
