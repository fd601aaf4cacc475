"""A subgraph's scope: its own values first, the enclosing graphs' visible by name, writes kept inside."""
from __future__ import annotations

from opspec.runtime.inference.subgraphs import Scope


def test_a_scope_reads_through_to_the_graphs_around_it_and_writes_inside():
    outer = {"x": 1, "y": 2}
    middle = Scope(outer)
    middle["y"] = 3
    inner = Scope(middle)
    assert (inner.get("x"), inner.get("y"), inner.get("z"), inner.get("z", 0)) == (1, 3, None, 0)
    inner["x"] = 4
    assert inner.get("x") == 4 and outer["x"] == 1 and dict(inner) == {"x": 4}
    assert "y" in inner and "z" not in inner


def test_a_scope_is_true_when_any_enclosing_graph_holds_a_value():
    assert not Scope(Scope({}))
    assert Scope(Scope({"shape": 1}))
