"""Tests for opspec.runtime.shape.symbols: fresh symbol names that avoid a graph's names."""
from opspec.runtime.shape import Sym, SymbolTable


def test_fresh_names_count_up():
    table = SymbolTable()
    assert [table.fresh_name() for _ in range(3)] == ["unk__0", "unk__1", "unk__2"]
    s = table.fresh()
    assert s == Sym("unk__3") and s.is_symbol


def test_fresh_names_skip_existing_names():
    table = SymbolTable(["unk__0", "unk__2", "batch"])
    assert table.fresh_name() == "unk__1"
    assert table.fresh_name() == "unk__3"
    assert "batch" in table and "unk__1" in table and "unk__9" not in table


def test_names_inside_expressions_are_reserved():
    table = SymbolTable(["2*unk__0", "ceil(unk__1/2)", "batch size"])
    assert "2*unk__0" in table and "unk__0" in table and "unk__1" in table
    assert "batch size" in table
    assert table.fresh_name() == "unk__2"


def test_add_accepts_syms_and_text():
    table = SymbolTable()
    table.add(Sym("unk__0") + 1)
    table.add("unk__1")
    assert "unk__0+1" in table
    assert table.fresh() == Sym("unk__2")


def test_fresh_names_never_repeat():
    table = SymbolTable([f"unk__{i}" for i in range(0, 50, 3)])
    seen = {table.fresh_name() for _ in range(100)}
    assert len(seen) == 100
    assert not seen & {f"unk__{i}" for i in range(0, 50, 3)}
    assert len(table) == 100 + 17


def test_custom_prefix():
    table = SymbolTable(["s0"], prefix="s")
    assert table.fresh_name() == "s1"


def test_fresh_names_made_together_are_those_made_one_by_one():
    taken = [f"unk__{i}" for i in (1, 2, 5, 9, 10, 11)]
    one_by_one, together = SymbolTable(taken), SymbolTable(taken)
    expected = [one_by_one.fresh_name() for _ in range(7)] + [one_by_one.fresh_name()]
    assert together.fresh_names(7) + together.fresh_names(0) + [together.fresh_name()] == expected
    assert together.names_issued == one_by_one.names_issued and together.issued == one_by_one.issued == 8
    assert together.fresh_names(3) == [one_by_one.fresh_name() for _ in range(3)]


def test_taken_names_are_reserved_before_the_first_fresh_name_only():
    asked = []

    def taken(prefix):
        asked.append(prefix)
        return [f"{prefix}0", f"{prefix}2"]

    table = SymbolTable(["N"], taken=taken)
    assert "N" in table and "unk__0" not in table and asked == []  # looking a name up does not search the model
    assert table.fresh_names(2) == ["unk__1", "unk__3"] and asked == ["unk__"]
    assert table.fresh_name() == "unk__4" and asked == ["unk__"]
