"""Running one node's rule for the graph walk: the node checked against its schema, output types
pre-bound, the rule called, what it read recorded, and a clean result remembered for reuse.

:class:`RuleRunner` is the part of :class:`~.walk.Walker` that runs when a node's result is not
known yet; the walk itself (:mod:`.walk`) reads nodes and reuses results.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from opspec.runtime.constraints import ConstraintError, Violation
from opspec.runtime.contract import (
    InferenceContext,
    InferenceError,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
)
from opspec.runtime.inference import node_errors
from opspec.runtime.inference.checks import check_node, check_outputs
from opspec.runtime.inference.node_errors import NODE_PROBLEMS, NodeError, Severity, rule_failure
from opspec.runtime.inference.read_attributes import AttributeReader, AttributesOnDemand
from opspec.runtime.inference.read_tensors import InputDataOnDemand
from opspec.runtime.inference.resolve import ELEM_ONLY, OpEntry, bind_output
from opspec.runtime.inference.typeops import dim_out_of_range
from opspec.runtime.shape import SymbolTable

if TYPE_CHECKING:
    from opspec.runtime.inference.walk import GraphWalk

_VALUE_TYPES = frozenset({TensorType, SparseTensorType, SequenceType, OptionalType, MapType})
#: How many distinct results each op remembers for reuse by identical later nodes
#: (0 turns reuse off; the benchmarks measure both ways).
MEMO_LIMIT = 4096


class RuleRunner:
    """Runs a node's rule and keeps what the walk needs of it (the state is the walker's)."""

    symbols: SymbolTable
    check_type: bool
    attributes: AttributeReader
    #: Infers the graph attributes of a node (set by the whole-model driver: see :mod:`.subgraphs`).
    subgraphs: Callable[..., Any] | None
    #: Whether some rule gave a dim that no model can hold (beyond int64).
    unwritable: bool
    #: Nodes found to conform to their schema (``check_type``), by op entry, output count,
    #: input types, which inputs are given and the attributes' exact key: models repeat nodes.
    _conforming: set[tuple[Any, ...]]

    def fail(self, errors: list[NodeError], index: int, node: Any, message: str, strict: bool,
             violations: tuple[Violation, ...] = (), severity: Severity = Severity.ERROR,
             of_form: bool = False) -> None:
        """Record a problem at ``node`` (the broken attribute constraints it stands for, if
        any; whether it is one of the node's form, see :class:`NodeError`); with ``strict``,
        raise an error (never a note) as an :class:`InferenceError`."""
        error = NodeError(index, node.name, node.op_type, node.domain, message, violations, severity, of_form)
        errors.append(error)
        if strict and severity is Severity.ERROR:
            raised = InferenceError(str(error))
            raised.errors = [error]
            raise raised

    def _conforms(self, entry: OpEntry, index: int, node: Any, in_names: list[str], output_count: int,
                  inputs: tuple[Any, ...], attribute_protos: Any, attributes: Mapping[str, Any] | None,
                  exact: tuple[bytes, ...] | None, errors: list[NodeError], strict: bool) -> bool:
        """Check the node against its schema (``check_type``); whether it conforms.

        ``exact`` is the attributes' exact key (None when they are not keyed): a node like
        one that conformed before conforms, so it is passed at once."""
        assert entry.schema is not None and attributes is not None  # read at once when checking
        key = None
        if exact is not None:
            key = (entry, output_count, inputs, tuple(map(bool, in_names)), exact)
            try:
                if key in self._conforming:
                    return True
            except TypeError:  # something unhashable in a type: checked every time
                key = None
        conforms = True
        for problem in check_node(entry.schema, in_names, output_count, inputs, attribute_protos, attributes):
            conforms = False
            self.fail(errors, index, node, str(problem), strict,
                      (problem,) if type(problem) is Violation else (), of_form=True)
        if conforms and key is not None and len(self._conforming) < MEMO_LIMIT * 4:
            self._conforming.add(key)
        return conforms

    def _infer_node(self, walk: GraphWalk, entry: OpEntry, index: int, node: Any, in_names: list[str],
                    output_count: int, inputs: tuple[Any, ...], data: tuple[Any, ...] | None,
                    attributes: Mapping[str, Any] | None, conforms: bool,
                    key: Any) -> tuple[Sequence[Any], Sequence[Any]]:
        """Run the node's rule (its graph attributes inferred first) over pre-bound output types;
        the outputs and their data. A clean result is remembered under ``key`` for reuse.

        ``attributes`` None: the op declares none and they are read only if the rule asks; input
        data is looked up only if the rule asks while the op's ``data_unread`` holds. If it asks,
        they are read with every later node of the op, and the result is keyed on them too."""
        schema = entry.schema
        datas, errors, strict = walk.datas, walk.errors, walk.strict
        given: Mapping[str, Any]
        on_demand = None
        if attributes is None:
            given = on_demand = AttributesOnDemand(node)
        else:
            given = attributes
        # No rule run of the op has looked at input data yet: it is looked up only if this one does.
        data_on_demand = InputDataOnDemand(in_names, datas) if entry.data_unread else None
        assert schema is not None  # a schema entry has one
        subgraphs = infer_subgraphs = settle = None
        if entry.has_graphs and self.subgraphs is not None:
            subgraphs, infer_subgraphs, settle = self.subgraphs(index, node, walk.types, datas, walk.opsets, errors,
                                                                strict, walk.around)
        symbols = self.symbols
        ctx = InferenceContext(schema, list(inputs), given, args=entry.args,
                               data=data_on_demand if data_on_demand is not None else
                               list(data) if data is not None else None, names=in_names, symbols=symbols,
                               node_name=node.name, opset=entry.opset, output_count=output_count,
                               subgraphs=subgraphs, infer_subgraph=infer_subgraphs, positions=entry.formal_positions)
        outputs, output_data = ctx.results()  # the walk's side of the contract: pre-bound output types
        plan = entry.plans.get((len(inputs), output_count)) or entry.plan(len(inputs), output_count)
        position = 0
        for sources, fixed in plan:
            if sources:
                value = inputs[sources[0]]
                if type(value) is TensorType and value.elem:
                    outputs[position] = ELEM_ONLY.get(value.elem) or bind_output(inputs, sources, fixed)
                else:
                    outputs[position] = bind_output(inputs, sources, fixed)
            else:
                outputs[position] = fixed
            position += 1
        rule = entry.rule
        if rule is not None:
            fresh_before = symbols.issued
            failed = self._apply(rule, ctx, index, node, errors, strict)
            if on_demand is not None and on_demand.read:
                entry.reads_attributes()  # from now on read with every node, and keyed on
                frozen = self.attributes.read(node.attribute)[1]
                key = None if key is None or frozen is None else (key[0], key[1], frozen, *key[3:])
            if data_on_demand is not None and data_on_demand.read:
                entry.reads_data()  # from now on gathered with every node, and keyed on
                if key is not None:
                    key = (key[0], _input_data(in_names, datas), *key[2:])
            if not self.unwritable:
                self.unwritable = any(value is not None and dim_out_of_range(value) is not None for value in outputs)
            if self.check_type and conforms and not failed:  # a result memoized below has passed this
                for problem in check_outputs(schema, outputs):
                    failed = True
                    self.fail(errors, index, node, problem, strict, of_form=True)
            memo = entry.memo
            if key is not None and memo is not None and not failed and symbols.issued == fresh_before \
                    and len(memo) < MEMO_LIMIT:
                memo[key] = (tuple(outputs), tuple(output_data))
        if settle is not None:  # the problems of the node's graphs, weighed as the rule said
            settle(ctx.unsure_graphs)
        return outputs, output_data

    def _apply(self, rule: Callable[..., Any], ctx: InferenceContext, index: int, node: Any,
               errors: list[NodeError], strict: bool) -> bool:
        """Run ``rule`` on ``ctx``; whether it failed (its problems are the node's errors)."""
        failed = False
        try:
            rule(ctx)
        except NODE_PROBLEMS as error:
            failed = True
            self.fail(errors, index, node, str(error) or type(error).__name__, strict,
                      error.violations if type(error) is ConstraintError else ())
        except Exception as error:  # noqa: BLE001 - a bug in the rule, reported against the node
            if node_errors.RAISE_RULE_BUGS:
                raise
            failed = True
            self.fail(errors, index, node, rule_failure(error), strict)
        outputs = ctx.results()[0]
        for position, value in enumerate(outputs):
            if value is not None and type(value) not in _VALUE_TYPES:
                if node_errors.RAISE_RULE_BUGS:
                    raise TypeError(f"rule {getattr(rule, '__name__', rule)!r} set output {position} to {value!r}")
                outputs[position] = None
                failed = True
                self.fail(errors, index, node, f"inference gave output {position} a value that is not a type "
                          f"({type(value).__name__})", strict)
        return failed


def _input_data(in_names: list[str], datas: dict[str, Any]) -> tuple[Any, ...] | None:
    """A node's input data as the walk keys it (None when no input has any), as :meth:`Walker.run` gathers it."""
    if not datas or type(datas) is dict and datas.keys().isdisjoint(in_names):
        return None
    return tuple(map(datas.get, in_names))


__all__ = ["MEMO_LIMIT", "RuleRunner"]
