"""Hostile input for the indexing, selection and padding rules: random shapes, data and
attributes, many of them invalid, give a result or a node error and nothing else."""
from __future__ import annotations

import random

import pytest

import opspec
from opspec.runtime.contract import Data, InferenceError
from opspec.runtime.shape import Sym, SymbolTable
from opspec.runtime.testing import INT64, run_rule, t, vec

N = Sym("N")
OPS = [("GatherElements", 13), ("GatherND", 11), ("GatherND", 13), ("ScatterElements", 18), ("Scatter", 9),
       ("ScatterND", 18), ("TopK", 1), ("TopK", 10), ("TopK", 11), ("OneHot", 9), ("OneHot", 11), ("Tile", 1),
       ("Tile", 13), ("Compress", 9), ("Compress", 11), ("NonZero", 13), ("Unique", 11), ("Pad", 1), ("Pad", 2),
       ("Pad", 11), ("Pad", 18), ("CenterCropPad", 18), ("EyeLike", 9), ("DepthToSpace", 13),
       ("SpaceToDepth", 13), ("Trilu", 14), ("CumSum", 14)]
ATTRIBUTES: list[dict[str, object]] = [
    {}, {"axis": 0}, {"axis": -1}, {"axis": 5}, {"axis": -7}, {"batch_dims": 1}, {"batch_dims": 9},
    {"k": 2}, {"k": -1}, {"blocksize": 2}, {"blocksize": 0}, {"blocksize": 2**40}, {"pads": [1, 1]},
    {"paddings": [-5, 0]}, {"axes": [0, 0]}, {"axes": [1]}, {"dtype": 999}, {"dtype": INT64}]
REQUIRED: dict[str | tuple[str, int], dict[str, object]] = {
    "DepthToSpace": {"blocksize": 2}, "SpaceToDepth": {"blocksize": 2}, ("TopK", 1): {"k": 1},
    ("Pad", 1): {"paddings": [0, 1]}, ("Pad", 2): {"pads": [0, 1]}}


def _dim(rng):
    return rng.choice([0, 1, 2, 3, 5, N, None, 2**40])


def _type(rng):
    if rng.random() < 0.15:
        return t(None, elem=rng.choice([1, INT64]))
    return t(*(_dim(rng) for _ in range(rng.randint(0, 4))), elem=rng.choice([1, INT64]))


def _data(rng):
    roll = rng.random()
    if roll < 0.4:
        return None
    if roll < 0.5:
        return Data((), (rng.choice([0, -1, 3, 2**62, 1.5, N]),))
    return vec(*(rng.choice([0, 1, -1, -3, 2, 7, 2**62, N, None, 2.0]) for _ in range(rng.randint(0, 6))))


@pytest.mark.parametrize("seed", range(4))
def test_random_nodes_give_a_result_or_a_node_error(seed):
    rng = random.Random(seed)
    for _ in range(1500):
        op, version = rng.choice(OPS)
        schema = opspec.get_schema(op, version)
        count = len(schema.inputs)
        attributes = {**REQUIRED.get(op, {}), **REQUIRED.get((op, version), {}), **rng.choice(ATTRIBUTES)}
        try:
            run_rule(op, version, [_type(rng) for _ in range(count)], attributes, data=[_data(rng) for _ in range(count)],
                names=[f"in{i}" for i in range(count)], output_count=len(schema.outputs), symbols=SymbolTable(()))
        except InferenceError:
            pass
