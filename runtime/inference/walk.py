"""The graph walk: each node's rule run over plain values, in node order (the data
dependencies' order when the list is not in it: see :mod:`.node_order`).

State lives in dictionaries keyed by value name (``types``, ``datas``); protobuf is read
only for each node's own fields. Per node: resolve its op (once per ``(domain, op_type)``,
see :mod:`.resolve`), read its inputs and attributes, reuse the results of an identical
earlier node or bind output types and call the rule (:mod:`.rule_runner`), then merge the outputs with what the
graph declares and store them. Function calls and graph attributes are handed to hooks
(:mod:`.functions`, :mod:`.subgraphs`).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, Callable, Iterator, Mapping, Sequence

from opspec.runtime.contract.values import TensorType
from opspec.runtime.inference.deferred_types import DeferredTypes, UnreadType
from opspec.runtime.inference.node_errors import NodeError, rule_failure
from opspec.runtime.inference.node_order import ListAhead, ReadAhead, graphs_read_untyped, walk_order
from opspec.runtime.inference.read_attributes import AttributeReader, attribute_values
from opspec.runtime.inference.resolve import EntryKind, OpEntry, resolve
from opspec.runtime.inference.rule_runner import MEMO_LIMIT, RuleRunner
from opspec.runtime.inference.typeops import TypeConflict, describe, merge_types, prefer_inferred, types_conflict
from opspec.runtime.op_set import OpSet
from opspec.runtime.shape import SymbolTable

#: A node without attributes: its values, value key and exact key (see :class:`AttributeReader`).
_NONE: tuple[dict[str, Any], tuple[Any, ...], tuple[bytes, ...]] = ({}, (), ())
#: A node whose attributes are left unread (its op declares none): no values yet, keyed as none.
_UNREAD: tuple[None, tuple[Any, ...], tuple[bytes, ...]] = (None, (), ())
_SCHEMA = EntryKind.SCHEMA


@dataclass(frozen=True, slots=True)
class GraphWalk:
    """The state of one walk over one graph's nodes (the model's, a subgraph's, a function body's).

    ``types`` and ``datas`` hold every value's type and data by name, the walk adding each node's
    outputs; ``declared`` the types the graph declares for values; ``opsets`` the opset imports in
    force; ``entries`` how each ``(domain, op_type)`` is inferred (shared by walks under the same
    imports); ``producers`` records each output's node index (None: not recorded); ``errors``
    collects the node problems, and ``strict`` raises at the first. ``around`` is asked about the
    values of the enclosing graphs that a read finds no type for (see :class:`.node_order.ListAhead`;
    None: the graph reads nothing from around it that a list being watched gives later).
    """

    nodes: Sequence[Any]
    types: Any
    datas: Any
    declared: dict[str, Any]
    opsets: dict[str, int]
    entries: dict[tuple[str, str], OpEntry]
    producers: dict[str, int] | None
    errors: list[NodeError]
    strict: bool
    around: ListAhead | None = None


class Walker(RuleRunner):
    """Walks one model's graphs (and the functions it calls), node by node.

    ``errors`` collects :class:`NodeError` s (with ``strict``, :meth:`run` raises at the first);
    ``unknown`` maps ``(domain, op_type)`` of ops without a schema to the reason, and
    ``unknown_nodes`` lists the main-graph nodes concerned.
    """

    def __init__(self, op_set: OpSet, symbols: SymbolTable, functions: dict[tuple[str, str], Any], *,
                 check_type: bool = False, data_prop: bool = False) -> None:
        #: Where the walk looks operators up, and the rules it runs.
        self.op_set = op_set
        self.symbols = symbols
        self.functions = functions
        self.check_type = check_type
        self.data_prop = data_prop
        self.errors: list[NodeError] = []
        self.unknown: dict[tuple[str, str], str] = {}
        self.unknown_nodes: list[NodeError] = []  # main-graph nodes without a schema
        #: Domains used without an opset import and inferred at their newest version.
        self.implied: dict[str, int] = {}
        #: Infers the graph attributes of a node (set by the whole-model driver: see :mod:`.subgraphs`).
        self.subgraphs: Callable[..., Any] | None = None
        #: Infers a call of a model-local function (see :mod:`.functions`).
        self.call_function: Callable[..., Any] | None = None
        #: Symbols the main graph declares for values but no input carries (inferred dims of
        #: ``input_symbols`` replace them), and the symbols of its inputs and initializers.
        self.loose_symbols: frozenset[str] = frozenset()
        self.input_symbols: frozenset[str] = frozenset()
        #: Whether some rule gave a dim that no model can hold (beyond int64): every type
        #: is made by a rule, so the whole-model driver looks for such dims only then.
        self.unwritable = False
        #: The main graph's input types not decoded yet: decoded before anything but a node that
        #: passes its input's type on looks at a value (set by the whole-model driver).
        self.deferred: DeferredTypes | None = None
        #: Whether a graph has read a value ahead of a list (see :meth:`_ahead`): from then on the graphs
        #: of a node are scanned for what they read before it is inferred, so that a node is given up
        #: only by walks already under way (at most one per level of nesting), never again and again.
        self.read_ahead = False
        self.attributes = AttributeReader()
        self._merged: dict[tuple[Any, Any], Any] = {}
        #: Nodes found to conform to their schema (``check_type``), by op entry, output count,
        #: input types, which inputs are given and the attributes' exact key: models repeat nodes.
        self._conforming: set[tuple[Any, ...]] = set()

    def run(self, walk: GraphWalk) -> None:
        """Infer every node of ``walk`` in order, updating its ``types``/``datas``; record producers
        by node index (unless ``producers`` is None: a value's type is then stored at its first
        producer's turn, so ``types`` still lists the node outputs in node order).

        Per node, in steps: find how its op is inferred (:meth:`_entry`; a node that no schema's
        rule infers goes to :meth:`_other`); read its input types, and store a type it passes on
        unchanged at once (see :func:`_passing_on`); read its input data and attributes, checking it
        against its schema (:meth:`_read_node`); reuse the result of the run of nodes alike it
        follows (:meth:`_repeat_recent`) or of an identical earlier node (:meth:`_remembered`,
        :meth:`_store_found`: models repeat the same block many times, and a result is kept
        unless the rule failed or made up fresh symbols); else run its rule and store what it
        gives (:meth:`_infer_node`, :meth:`_store`).
        """
        nodes, types = walk.nodes, walk.types
        get_type = types.get
        keep_all_data = self.data_prop
        reuse = MEMO_LIMIT > 0
        quick = reuse and not self.check_type  # whether an op whose results follow from input types may skip the rest
        passing = not self.check_type  # whether a node that passes its input's type on may skip its rule
        # The entries inferred by a schema's rule: of the default domain by op type alone, of others by both.
        plain: dict[str, OpEntry] = {}
        inferred: dict[tuple[str, str], OpEntry] = {}
        get_plain = plain.get
        get_inferred = inferred.get
        deferred = self.deferred if self.deferred is not None and self.deferred.types is types else None
        pass_on = _passing_on(walk, deferred)
        # The list is walked in its order until a node reads a value nothing has given a type yet (or its
        # graphs read such a value given later in the list): then, once, the order is checked, and if it is
        # not the data's, the rest is walked in the data's order (see :mod:`.node_order`).
        watching = True
        order = _Order(nodes)
        around = walk.around  # the enclosing lists being watched, asked about what this graph reads untyped
        ahead: ListAhead | None = None  # this list's, once a node holding graphs is walked while watching
        ahead_walk = walk
        for index, node in order:
            op_type = node.op_type
            domain = node.domain
            entry = get_inferred((domain, op_type)) if domain else get_plain(op_type)
            if entry is None:
                entry = self._entry(walk, domain, op_type)
                if entry.kind is not _SCHEMA:
                    if watching:
                        watching = False
                        if order.reorder(index):
                            continue
                    if around is not None:
                        around.check(node.input[:], types)
                    if deferred is not None:
                        self._decode_deferred()
                        deferred = None
                    self._other(walk, entry, index, node)
                    continue
                if domain:
                    inferred[(domain, op_type)] = entry
                else:
                    plain[op_type] = entry
            in_names = node.input[:]  # slicing is the fastest way to a list of a repeated field
            out_names = node.output[:]
            count = len(in_names)  # most nodes have one or two inputs: a tuple made directly is far quicker
            inputs: tuple[Any, ...]
            if count == 1:
                value = get_type(in_names[0])
                if passing and entry.passes_type and len(out_names) == 1 and value is not None \
                        and ((kind := type(value)) is TensorType or kind is UnreadType) and value.elem \
                        and pass_on(value, out_names[0], index):
                    continue
                inputs = (value,)
            elif count == 2:
                first, second = in_names
                inputs = (get_type(first), get_type(second))
            else:
                inputs = tuple(map(get_type, in_names))
            if deferred is not None:  # this node looks at types: every unread one is decoded now
                self._decode_deferred()
                deferred = None
                inputs = tuple(map(get_type, in_names))
            if (watching or around is not None) and None in inputs and _reads_unknown(in_names, inputs):
                if watching:
                    watching = False
                    if order.reorder(index):
                        continue
                if around is not None:
                    around.check([name for name, value in zip(in_names, inputs) if value is None], types)
            if watching and entry.has_graphs:  # its graphs may read values later nodes give
                if not self.read_ahead:  # walked expecting they do not: see ``_ahead``
                    if ahead is None:
                        ahead = ListAhead(nodes, around)
                        ahead_walk = replace(walk, around=ahead)
                    ahead.position = index
                    if not self._ahead(ahead_walk, entry, index, node, in_names, out_names, inputs):
                        watching = False
                        if not order.reorder(index):
                            order.again(index)
                    continue
                if graphs_read_untyped(node, types):
                    watching = False
                    if order.reorder(index):
                        continue
            data: tuple[Any, ...] | None
            attributes: Mapping[str, Any] | None
            if quick and entry.types_only:  # nothing else to read: the result follows from input types alone
                data, conforms = None, True
                attributes, frozen, exact = _UNREAD
            else:
                data, attributes, frozen, exact, conforms = self._read_node(walk, entry, index, node, in_names,
                                                                            len(out_names), inputs)
            plain_key = data is None and frozen == ()  # keyed on input types alone
            if plain_key and entry.recent is not None and self._repeat_recent(walk, entry, inputs, out_names, index):
                continue
            key = found = None
            memo = entry.memo if reuse else None
            if memo is not None and frozen is not None:
                key, found = _remembered(memo, entry, in_names, inputs, data, frozen, len(out_names), plain_key)
            keep_data = keep_all_data or entry.constant_output
            if found is None:
                outputs, output_data = self._infer_node(walk, entry, index, node, in_names, len(out_names), inputs,
                                                        data, attributes, conforms, key)
                self._store(walk, out_names, outputs, output_data, keep_data, index, node)
            else:
                self._store_found(walk, out_names, found, keep_data, index, node)

    def _ahead(self, walk: GraphWalk, entry: OpEntry, index: int, node: Any, in_names: list[str],
               out_names: list[str], inputs: tuple[Any, ...]) -> bool:
        """Infer a node holding graphs while the list's order is not known to be the data's, as if
        it were (``walk.around`` is the list's :class:`ListAhead`, at this node); whether it was.
        When one of its graphs reads a value a node at or after it gives (and has no type for it
        yet), nothing of the node is kept, not even the problems found in it: False."""
        errors = walk.errors
        reported = len(errors)
        try:
            data, attributes, _, _, conforms = self._read_node(walk, entry, index, node, in_names, len(out_names),
                                                               inputs)
            outputs, output_data = self._infer_node(walk, entry, index, node, in_names, len(out_names), inputs,
                                                    data, attributes, conforms, None)
        except ReadAhead as read:
            if read.level is not walk.around:
                raise
            del errors[reported:]
            self.read_ahead = True
            return False
        self._store(walk, out_names, outputs, output_data, self.data_prop or entry.constant_output, index, node)
        return True

    def _entry(self, walk: GraphWalk, domain: str, op_type: str) -> OpEntry:
        """How nodes of ``(domain, op_type)`` are inferred under the walk's imports (resolved on first sight)."""
        op = (domain, op_type)
        entry = walk.entries.get(op)
        if entry is None:
            entry = walk.entries[op] = resolve(self.op_set, domain, op_type, walk.opsets, self.functions, self.implied)
        return entry

    def _read_node(self, walk: GraphWalk, entry: OpEntry, index: int, node: Any, in_names: list[str],
                   output_count: int, inputs: tuple[Any, ...]) -> tuple[Any, Any, Any, Any, bool]:
        """A node's input data and attributes as the rule and the memo see them, and whether it conforms
        to its schema (checked with ``check_type``): ``(data, attributes, frozen, exact, conforms)``."""
        datas = walk.datas
        count = len(in_names)
        data: tuple[Any, ...] | None
        # Most nodes see no data: one set test says so. A subgraph's scope also holds its outer
        # graphs' data, which its own keys do not show: there each input is looked up.
        if entry.data_unread or not datas or type(datas) is dict and datas.keys().isdisjoint(in_names):
            data = None
        elif count == 1:
            data = (datas.get(in_names[0]),)
        elif count == 2:
            data = (datas.get(in_names[0]), datas.get(in_names[1]))
        else:
            data = tuple(map(datas.get, in_names))
        check_type = self.check_type
        attributes: Mapping[str, Any] | None
        if entry.attributes_unread and not check_type:  # read only if the rule looks
            attribute_protos = None
            attributes, frozen, exact = _UNREAD
        elif not (attribute_protos := node.attribute):
            attributes, frozen, exact = _NONE
        elif entry.has_graphs:  # graphs are read as the messages they are, never shared
            attributes, frozen, exact = attribute_values(attribute_protos), None, None
        else:
            attributes, frozen, exact = self.attributes.read(attribute_protos)
        conforms = not check_type or self._conforms(entry, index, node, in_names, output_count, inputs,
                                                    attribute_protos, attributes, exact, walk.errors, walk.strict)
        return data, attributes, frozen, exact, conforms

    def _repeat_recent(self, walk: GraphWalk, entry: OpEntry, inputs: tuple[Any, ...], out_names: list[str],
                       index: int) -> bool:
        """Store the result of the run of nodes alike that this node continues, if it does (one output,
        the same input types, nothing declared there); whether it was stored."""
        recent = entry.recent
        if recent is None or recent[0] != inputs or len(out_names) != 1:
            return False
        name = out_names[0]  # stored as the common case of ``_store_found`` is
        if not name or name in walk.declared:
            return False
        walk.types[name] = recent[1]
        if walk.producers is not None:
            walk.producers[name] = index
        return True

    def _store_found(self, walk: GraphWalk, out_names: list[str], found: Any, keep_data: bool, index: int,
                     node: Any) -> None:
        """Store the results of an identical earlier node as this node's."""
        outputs, output_data = found
        if len(out_names) == 1:  # the common case, stored inline (as ``_store`` does)
            name = out_names[0]
            if name and name not in walk.declared:
                if outputs[0] is not None:
                    walk.types[name] = outputs[0]
                if walk.producers is not None:
                    walk.producers[name] = index
                if output_data[0] is not None and keep_data:
                    walk.datas[name] = output_data[0]
                return
        self._store(walk, out_names, outputs, output_data, keep_data, index, node)

    def _decode_deferred(self) -> None:
        """Decode the unread input types (for good: the walk looks at them from now on)."""
        if self.deferred is not None:
            self.deferred.resolve()
            self.deferred = None

    def _store(self, walk: GraphWalk, out_names: list[str], outputs: Any, output_data: Any, keep_data: bool,
               index: int, node: Any) -> None:
        """Merge a node's outputs with what the graph declares and record them by name."""
        types, datas, producers, get_declared = walk.types, walk.datas, walk.producers, walk.declared.get
        errors, strict = walk.errors, walk.strict
        position = 0
        for name in out_names:
            if name:
                value = outputs[position]
                previous = get_declared(name)
                if previous is not None:
                    try:
                        value = self._with_declared(previous, value)
                    except TypeConflict as conflict:
                        self.fail(errors, index, node, f"output '{name}': inferred type {describe(value)} "
                                  f"conflicts with the declared {describe(previous)} ({conflict})", strict,
                                  of_form=types_conflict(previous, value))
                        value = previous
                    except Exception as error:  # noqa: BLE001 - a rule set something that is not a type
                        self.fail(errors, index, node, f"output '{name}': {rule_failure(error)}", strict)
                        value = previous
                if value is not None:
                    types[name] = value
                if producers is not None:
                    producers[name] = index
                if keep_data:
                    value = output_data[position]
                    if value is not None:
                        datas[name] = value
            position += 1

    def _with_declared(self, declared: Any, inferred: Any) -> Any:
        """What a value is, given its declared and inferred types (:class:`TypeConflict` when they
        contradict); graphs declare many values alike, so each distinct pair is worked out once."""
        key = (declared, inferred)
        try:
            known = self._merged.get(key)
            hashable = True
        except TypeError:  # something unhashable: not a type, the caller reports it
            known, hashable = None, False
        if known is None:
            known = merge_types(declared, inferred)
            if self.loose_symbols:
                known = prefer_inferred(known, inferred, self.loose_symbols, self.input_symbols)
            if hashable:
                self._merged[key] = known
        return known

    def _other(self, walk: GraphWalk, entry: OpEntry, index: int, node: Any) -> None:
        """A node not inferred by a schema's rule: a function call, an unknown op or a broken one."""
        errors, strict = walk.errors, walk.strict
        out_names = list(node.output)
        results: list[Any] = []
        result_data: list[Any] = []
        if entry.kind == EntryKind.FUNCTION:
            if self.call_function is not None:
                results, result_data = self.call_function(entry.function, node, walk.types, walk.datas, errors, index,
                                                          strict)
        elif entry.kind == EntryKind.UNKNOWN:
            self.unknown.setdefault((node.domain, node.op_type), entry.reason)
            if errors is self.errors:  # a node of the main graph, not of a function body
                self.unknown_nodes.append(NodeError(index, node.name, node.op_type, node.domain, entry.reason))
        else:
            self.fail(errors, index, node, entry.reason, strict, of_form=True)
        padding = len(out_names) - len(results)
        self._store(walk, out_names, list(results) + [None] * padding, list(result_data) + [None] * padding, True,
                    index, node)


def _passing_on(walk: GraphWalk, deferred: DeferredTypes | None) -> Callable[[Any, str, int], bool]:
    """How the walk stores the input type ``value`` of a node that passes it on unchanged as its output
    ``name`` (its dims never looked at): ``pass_on(value, name, index)``, whether it was (not when
    the graph declares another type there). Made once per walk: it runs for most nodes of some graphs."""
    types, get_declared, producers = walk.types, walk.declared.get, walk.producers

    def pass_on(value: Any, name: str, index: int) -> bool:
        if name:
            previous = get_declared(name)
            # A declared type without a shape and of no other element type merges into this one.
            if previous is not None and not (type(previous) is TensorType and previous.shape is None
                                             and (not previous.elem or previous.elem == value.elem)):
                return False
            types[name] = value
            if producers is not None:
                producers[name] = index
            if deferred is not None and type(value) is UnreadType:  # (none is left once they are decoded)
                deferred.names.append(name)
        return True

    return pass_on


def _remembered(memo: dict[Any, Any], entry: OpEntry, in_names: list[str], inputs: tuple[Any, ...], data: tuple[Any, ...] | None,
                frozen: Any, output_count: int, plain_key: bool) -> tuple[Any, Any]:
    """``(key, found)``: the key of a node in its op's ``memo`` and the results of an identical earlier node (None when
    there is none; both None when the node cannot be keyed). A single-output result found on input
    types alone becomes the op's ``recent`` one, which a run of nodes alike compares instead of hashing."""
    # An omitted input and a supplied but unknown one both read None: tell them apart.
    omitted = tuple([not name for name in in_names]) if None in inputs else None
    key = (inputs, data, frozen, output_count, omitted)
    try:
        found = memo.get(key)
    except TypeError:  # something unhashable (a float NaN is fine; a message is not)
        return None, None
    if found is not None and plain_key and omitted is None and output_count == 1 \
            and found[0][0] is not None and found[1][0] is None:
        entry.recent = (inputs, found[0][0])
    return key, found


class _Order:
    """The order a walk takes a graph's nodes in, as ``(position, node)``: the list's until
    :meth:`reorder` switches to the data's (list order costs nothing per node on top of the list's own iteration)."""

    __slots__ = ("_nodes", "_listed", "_later")

    def __init__(self, nodes: Sequence[Any]) -> None:
        self._nodes = nodes
        self._listed = enumerate(nodes)
        self._later: list[int] = []

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        return chain(self._listed, self._reordered())

    def _reordered(self) -> Iterator[tuple[int, Any]]:
        nodes = self._nodes
        for position in self._later:
            yield position, nodes[position]

    def reorder(self, position: int) -> bool:
        """Whether the walk, at ``position`` of the list (every node before it walked), goes on in the
        data's order: then the nodes still to walk (this one among them) come next, in that order."""
        order = walk_order(self._nodes)
        if order is None:
            return False
        self._later = [later for later in order if later >= position]
        deque(self._listed, maxlen=0)  # the rest of the list is not walked in its order
        return True

    def again(self, position: int) -> None:
        """Walk the list on from ``position`` again (every node before it walked)."""
        self._later = list(range(position, len(self._nodes)))
        deque(self._listed, maxlen=0)


def _reads_unknown(names: list[str], types: tuple[Any, ...]) -> bool:
    """Whether a node reads a value (an input it supplies) whose type is not known yet."""
    return any(name and value is None for name, value in zip(names, types))


__all__ = ["GraphWalk", "MEMO_LIMIT", "Walker"]
