"""Declaring a rule where it is implemented: its name, one-line summary and parameters.

::

    @rule("reduce", "Reduce the listed axes, keeping them as 1 if keepdims.",
          axes=input_or_attribute(), keepdims=attribute())
    def reduce(ctx: InferenceContext) -> None:
        ...

The declaration is the only place a rule is described: the compiler reads it (without
running the module) to check opdefs references and to write the rules reference, and the
runtime collects the decorated functions. Arguments of ``rule`` and of the parameter
constructors must therefore be literals, or names bound to literals at module level.

A parameter of kind *input*, *attribute* or *input_or_attribute* names a part of the op;
its default is the parameter's own name unless given (``attribute(None)``: no default).
A plain parameter (``option``) carries a value of kind ``int``, ``bool`` or ``string``.

A rule states what it needs of the engine beyond the plain contract by flags, keyword
arguments of ``rule`` that are not parameters (:data:`RULE_FLAGS`), each ``True`` or
``False``: ``constant_output=True`` says the data the rule gives its outputs is a constant
of the node itself, kept even when data propagation is off (``Constant``'s rule);
``passes_input_type=True`` says that, with none of its parameters given a value, the rule gives
a node of one input and one output exactly the input's type when that is a tensor type of known
element type, reading nothing else (the engine then need not run it, nor look at the dims).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

NAMES_INPUT = "input"
NAMES_ATTRIBUTE = "attribute"
NAMES_INPUT_OR_ATTRIBUTE = "input_or_attribute"
NAMING_KINDS = (NAMES_INPUT, NAMES_ATTRIBUTE, NAMES_INPUT_OR_ATTRIBUTE)
PLAIN_KINDS: dict[str, type] = {"int": int, "bool": bool, "string": str}
#: The attribute on a decorated function that holds its :class:`RuleSpec`.
SPEC_ATTRIBUTE = "opspec_rule"
_OWN_NAME = "\0own name"
#: Keyword arguments of :func:`rule` that are flags of the rule, not parameters, with their meaning.
RULE_FLAGS: dict[str, str] = {
    "constant_output": "the data it gives is the node's own constant, kept without data propagation",
    "passes_input_type": "with no parameter set, one input's tensor type passes to one output unchanged",
}


class DeclarationError(ValueError):
    """A rule declaration that does not follow the rules above."""


@dataclass(frozen=True)
class RuleParam:
    """One parameter of a rule.

    For the naming kinds the value is a name in the op; ``required`` means the op must
    have it, otherwise the rule copes when the op lacks it.
    """

    name: str
    kind: str
    default: Any = None
    required: bool = False
    choices: tuple[Any, ...] | None = None
    doc: str = ""


@dataclass(frozen=True)
class RuleSpec:
    """A rule's signature and one-line purpose."""

    name: str
    summary: str
    params: tuple[RuleParam, ...] = ()
    #: The data the rule gives its outputs is the node's own constant (see :data:`RULE_FLAGS`).
    constant_output: bool = False
    #: With no parameter set, a one-input, one-output node's output type is its input's tensor
    #: type unchanged (see :data:`RULE_FLAGS`).
    passes_input_type: bool = False

    def param(self, name: str) -> RuleParam | None:
        return next((p for p in self.params if p.name == name), None)

    def defaults(self) -> dict[str, Any]:
        """Every parameter's default, by name."""
        return {p.name: p.default for p in self.params}


@dataclass(frozen=True)
class _Pending:
    """A parameter before the decorator gives it its name."""

    kind: str
    default: Any
    required: bool
    choices: tuple[Any, ...] | None
    doc: str


def attribute(default: str | None = _OWN_NAME, *, required: bool = False, doc: str = "") -> _Pending:
    """A parameter that names an attribute of the op."""
    return _Pending(NAMES_ATTRIBUTE, default, required, None, doc)


def input(default: str | None = _OWN_NAME, *, required: bool = False, doc: str = "") -> _Pending:  # noqa: A001
    """A parameter that names an input of the op."""
    return _Pending(NAMES_INPUT, default, required, None, doc)


def input_or_attribute(default: str | None = _OWN_NAME, *, required: bool = False, doc: str = "") -> _Pending:
    """A parameter that names an input in some versions of the op and an attribute in others."""
    return _Pending(NAMES_INPUT_OR_ATTRIBUTE, default, required, None, doc)


def option(kind: str, default: Any = None, *, choices: tuple | list | None = None, doc: str = "") -> _Pending:
    """A plain parameter: an ``int``, ``bool`` or ``string`` value, optionally from ``choices``."""
    if kind not in PLAIN_KINDS:
        raise DeclarationError(f"option kind {kind!r} is not one of {', '.join(PLAIN_KINDS)}")
    return _Pending(kind, default, False, tuple(choices) if choices is not None else None, doc)


def make_spec(name: str, summary: str, params: dict[str, Any]) -> RuleSpec:
    """The :class:`RuleSpec` that ``rule(name, summary, **params)`` declares (flags among ``params``)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise DeclarationError(f"rule name {name!r} is not an identifier")
    if not isinstance(summary, str) or not summary.strip() or "\n" in summary:
        raise DeclarationError(f"rule {name!r} needs a one-line summary")
    flags: dict[str, bool] = {}
    built = []
    for key, pending in params.items():
        if key in RULE_FLAGS:
            if type(pending) is not bool:
                raise DeclarationError(f"rule {name!r}: flag {key!r} must be True or False")
            flags[key] = pending
            continue
        if not isinstance(pending, _Pending):
            raise DeclarationError(f"rule {name!r}: parameter {key!r} must be declared with attribute(), "
                                   "input(), input_or_attribute() or option()")
        default = key if pending.default == _OWN_NAME else pending.default
        built.append(RuleParam(key, pending.kind, default, pending.required, pending.choices, pending.doc))
    return RuleSpec(name, summary.strip(), tuple(built), **flags)


def rule(name: str, summary: str, **params: Any) -> Callable[[Callable], Callable]:
    """Declare the decorated function as inference rule ``name`` (see the module docstring)."""
    spec = make_spec(name, summary, params)

    def declare(function: Callable) -> Callable:
        setattr(function, SPEC_ATTRIBUTE, spec)
        return function

    return declare


def rule_spec(function: Callable) -> RuleSpec:
    """The :class:`RuleSpec` that :func:`rule` gave ``function``; a function no declaration names fails."""
    spec = getattr(function, SPEC_ATTRIBUTE, None)
    if not isinstance(spec, RuleSpec):
        raise DeclarationError(f"{getattr(function, '__name__', function)!r} is not a declared rule")
    return spec


#: The constructors a declaration may call, by name (what the compiler's reader accepts).
CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "attribute": attribute, "input": input, "input_or_attribute": input_or_attribute, "option": option,
}
