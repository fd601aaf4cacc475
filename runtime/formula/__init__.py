"""A small expression language over a node's dims and attributes.

``numel(Y) * dim(A, -1)``, ``ceil(dim(X, 2) / stride)``, ``if(transA, dim(A, 0), dim(A, 1))``:
integer arithmetic on the sizes a node's inputs and outputs have and the attributes it sets,
evaluated exactly with the shape algebra (results are ints or symbolic dims, ``None`` when a
size the formula needs is unknown). :func:`parse_formula` reads text into a :class:`Formula`,
:func:`formula_problems` checks its names (and the functions it may call) against an operator's
signature, :func:`attribute_names` lists the attributes it reads, and :func:`evaluate` computes it
against a :class:`FormulaEnv`. Cost formulas use the whole language; the size an attribute relation
holds a dim to (``dim(B, 1) == ceil(K / block_size)``) only its :data:`ARITHMETIC` part.
"""
from .check import FormulaNames, attribute_names, formula_problems
from .evaluate import FormulaEnv, evaluate
from .functions import ARITHMETIC, FUNCTIONS, ArgKind, Function
from .syntax import Call, Formula, FormulaSyntaxError, Name, Number, Operation, parse_formula

__all__ = [
    "ARITHMETIC", "ArgKind", "Call", "FUNCTIONS", "Formula", "FormulaEnv", "FormulaNames", "FormulaSyntaxError",
    "Function", "Name", "Number", "Operation", "attribute_names", "evaluate", "formula_problems", "parse_formula",
]
