"""Tests for onnxruntime's sparse and paged attention rules: SparseAttention, DynamicSparseAttention,
PagedAttention, SparsePagedAttention, SparseAttentionIndexer and PackedSparseAttentionIndexer.

SparseAttention's CPU kernel needs the past and present caches bound to one buffer, so it is run
here with an I/O binding and its outputs compared with opspec's answer. The other ops have CUDA
kernels only: their expectations are those of onnxruntime's own inference functions for the same
nodes.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from ort_cases import outputs

import opspec
from opspec.runtime.contract import InferenceError
from opspec.runtime.shape import Sym
from opspec.runtime.testing import FLOAT, INT32, t, vec

B, S, N, P, TT = Sym("B"), Sym("S"), Sym("N"), Sym("P"), Sym("TT")
F16, I8 = 10, 3
HEADS: dict[str, Any] = {"num_heads": 4, "kv_num_heads": 2}  # keyword attributes of make_node


def names_of(inputs):
    return ["" if item is None else f"in{i}" for i, item in enumerate(inputs)]


# -- SparseAttention -------------------------------------------------------------------------------
def sparse(query, key, value, past=(B, 2, 64, 16)):
    inputs = [query, key, value, t(*past), t(*past), t(1, 5, elem=INT32), t(1, 10, elem=INT32),
              t(elem=INT32), t(B, elem=INT32)]
    return outputs("SparseAttention", inputs, {**HEADS, "sparse_block_size": 16}, 3, names=names_of(inputs))


def test_sparse_attention_keeps_the_cache_buffers():
    y, key, value = sparse(t(B, S, 64), t(B, S, 32), t(B, S, 32))
    assert y == t(B, S, 64)
    assert key == value == t(B, 2, 64, 16)


def test_sparse_attention_packed_query():
    y, _, _ = sparse(t(B, S, 128), None, None)
    assert y == t(B, S, 64)  # (4 + 2 * 2) heads of 16, four of them out


@pytest.mark.parametrize("query, past", [((B, S, 64, 1), (B, 2, 64, 16)), ((B, S, 64), (B, 2, 64))])
def test_sparse_attention_ranks(query, past):
    with pytest.raises(InferenceError):
        sparse(t(*query), t(B, S, 32), t(B, S, 32), past)


def sparse_model(packed):
    """A SparseAttention node over (B, S) queries and a 64-token cache, in one 4 x 4 block layout."""
    names = ["q", "" if packed else "k", "" if packed else "v", "pk", "pv", "rows", "cols", "total", "lens"]
    info = helper.make_tensor_value_info
    inputs = [info("q", TensorProto.FLOAT, ["B", "S", 128 if packed else 64])]
    inputs += [] if packed else [info(n, TensorProto.FLOAT, ["B", "S", 32]) for n in ("k", "v")]
    inputs += [info(n, TensorProto.FLOAT, ["B", 2, 64, 16]) for n in ("pk", "pv")]
    inputs += [info("total", TensorProto.INT32, []), info("lens", TensorProto.INT32, ["B"])]
    layout = [numpy_helper.from_array(np.array([[0, 1, 3, 6, 10]], np.int32), "rows"),
              numpy_helper.from_array(np.array([[0, 0, 1, 0, 1, 2, 0, 1, 2, 3]], np.int32), "cols")]
    node = helper.make_node("SparseAttention", names, ["y", "key", "value"], domain="com.microsoft",
                            **HEADS, sparse_block_size=16)
    outputs = [helper.make_empty_tensor_value_info(n) for n in ("y", "key", "value")]
    graph = helper.make_graph([node], "sparse", inputs, outputs, layout)
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def sparse_run(model, packed, batch, steps):
    """onnxruntime's output shapes, the caches bound as one buffer for past and present."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    rng, binding = np.random.default_rng(0), session.io_binding()
    binding.bind_cpu_input("q", rng.standard_normal((batch, steps, 128 if packed else 64)).astype(np.float32))
    for name in () if packed else ("k", "v"):
        binding.bind_cpu_input(name, rng.standard_normal((batch, steps, 32)).astype(np.float32))
    binding.bind_cpu_input("total", np.array(steps, np.int32))
    binding.bind_cpu_input("lens", np.full((batch,), steps, np.int32))
    binding.bind_output("y")
    for past, present in (("pk", "key"), ("pv", "value")):
        cache = onnxruntime.OrtValue.ortvalue_from_numpy(np.zeros((batch, 2, 64, 16), np.float32))
        binding.bind_ortvalue_input(past, cache)
        binding.bind_ortvalue_output(present, cache)
    session.run_with_iobinding(binding)
    return dict(zip(("y", "key", "value"), (tuple(v.shape()) for v in binding.get_outputs())))


@pytest.mark.parametrize("packed", [False, True])
def test_sparse_attention_against_onnxruntime(packed):
    model = sparse_model(packed)
    inferred = {v.name: v.type.tensor_type.shape for v in opspec.infer_shapes(model).graph.output}
    for batch, steps in ((2, 5), (1, 3)):
        real = sparse_run(model, packed, batch, steps)
        for name, shape in inferred.items():
            dims = tuple({"B": batch, "S": steps}[d.dim_param] if d.dim_param else d.dim_value for d in shape.dim)
            assert dims == real[name], (name, dims, real[name])


# -- DynamicSparseAttention ------------------------------------------------------------------------
def dynamic(query, key, value, past=None, total=None, count=3):
    inputs = [query, key, value, past, past, None, None, t(B, S, 8, elem=INT32), t(B, S, elem=INT32),
              t(B, elem=INT32), t(elem=INT32)]
    data = [None] * 10 + [total]
    return outputs("DynamicSparseAttention", inputs, HEADS, count, names=names_of(inputs), data=data)


def test_dynamic_sparse_attention_with_a_cache():
    y, key, value = dynamic(t(B, S, 64), t(B, S, 32), t(B, S, 32), t(B, 2, P, 16))
    assert y == t(B, S, 64) and key == value == t(B, 2, P, 16)


def test_dynamic_sparse_attention_without_a_cache_reads_the_total_length():
    assert dynamic(t(B, S, 64), t(B, S, 32), t(B, S, 32))[1] == t(B, 2, None, 16)
    assert dynamic(t(B, S, 64), t(B, S, 32), t(B, S, 32), total=vec(13))[1] == t(B, 2, 13, 16)
    y, key, _ = dynamic(t(2, 3, 128), None, None, total=vec(13))
    assert y == t(2, 3, 64) and key == t(2, 2, 13, 16)
    assert dynamic(t(B, S, 64), t(B, S, 32), t(B, S, 32), total=vec(P + S))[1] == t(B, 2, P + S, 16)


def test_dynamic_sparse_attention_total_length_present_but_unknown():
    """Soundness: a total length the graph computes at run time leaves the cache length unknown."""
    assert dynamic(t(B, S, 64), t(B, S, 32), t(B, S, 32), total=None)[1] == t(B, 2, None, 16)


def test_dynamic_sparse_attention_query_rank():
    with pytest.raises(InferenceError, match="3-D"):
        dynamic(t(B, S, 4, 16), t(B, S, 32), t(B, S, 32))


# -- PagedAttention and SparsePagedAttention -------------------------------------------------------
def paged(query, key, value, cache=(5, 16, 2, 16), count=3, attributes=None, op="PagedAttention",
          value_cache=True, cache_elem=F16):
    inputs = [query, key, value, t(*cache, elem=cache_elem), t(*cache, elem=cache_elem) if value_cache else None,
              t(3, elem=INT32), t(2, elem=INT32), t(2, 4, elem=INT32)]
    if op == "SparsePagedAttention":
        inputs += [None, t(N, 4, 8, elem=INT32), t(N, 4, elem=INT32)]
    return outputs(op, inputs, {**HEADS, **(attributes or {})}, count, names=names_of(inputs))


@pytest.mark.parametrize("op", ["PagedAttention", "SparsePagedAttention"])
def test_paged_attention_separate_caches(op):
    y, key, value = paged(t(N, 64, elem=F16), t(N, 32, elem=F16), t(N, 32, elem=F16), op=op)
    assert y == t(N, 64, elem=F16)
    assert key == value == t(5, 16, 2, 16, elem=F16)
    y, _, _ = paged(t(N, 128, elem=F16), None, None, op=op)
    assert y == t(N, 64, elem=F16)


def test_paged_attention_quantized_cache_keeps_its_type():
    _, key, value = paged(t(N, 64, elem=F16), t(N, 32, elem=F16), t(N, 32, elem=F16), cache_elem=I8)
    assert key == value == t(5, 16, 2, 16, elem=I8)


def test_paged_attention_latent_cache():
    q = t(N, 64, elem=F16)
    y, key = paged(q, q, None, count=2, value_cache=False,
                   attributes={"kv_cache_layout": "LATENT", "kv_num_heads": 1, "v_head_size": 8})
    assert y == t(N, 32, elem=F16) and key == t(5, 16, 2, 16, elem=F16)
    y, _ = paged(q, q, None, count=2, value_cache=False, attributes={"kv_cache_layout": "LATENT"})
    assert y == q


def test_paged_attention_packed_query_of_unknown_width():
    assert paged(t(N, None, elem=F16), None, None, count=1)[0] == t(N, None, elem=F16)


@pytest.mark.parametrize("query, value, cache, count, attributes, message", [
    ((N, 64, 1), True, (5, 16, 2, 16), 1, {}, "2-D"),
    ((N, 130), False, (5, 16, 2, 16), 1, {}, "does not split"),
    ((N, 64), True, (5, 16, 32), 3, {}, "rank 4"),
    ((N, 64), True, (5, 16, 2, 16), 2, {}, "both present"),
    ((N, 64), True, (5, 16, 2, 16), 1, {"kv_cache_layout": "PAGED"}, "SEPARATE or LATENT"),
    ((N, 64), False, (5, 16, 2, 16), 3, {"kv_cache_layout": "LATENT"}, "must be absent"),
    ((N, 64), False, (5, 16, 2, 16), 2, {"kv_cache_layout": "LATENT", "v_head_size": 20}, "exceeds"),
])
def test_paged_attention_errors(query, value, cache, count, attributes, message):
    v = t(N, 32, elem=F16) if value else None
    with pytest.raises(InferenceError, match=message):
        paged(t(*query, elem=F16), v, v, cache=cache, count=count, attributes=attributes)


def test_paged_attention_value_cache_required_for_its_output():
    with pytest.raises(InferenceError, match="value_cache is required"):
        paged(t(N, 64, elem=F16), t(N, 32, elem=F16), t(N, 32, elem=F16), value_cache=False)


# -- SparseAttentionIndexer and PackedSparseAttentionIndexer ---------------------------------------
QSA = {"policy_mode": "qsa", "compress_ratio": 4, "token_budget": 16}
CSA = {"policy_mode": "csa", "compress_ratio": 4, "index_topk": 8}


def indexer(attributes, count, query=(B, S, 128), past=(B, P, 32)):
    inputs = [t(*query), t(B, S, 32), t(32), t(32), t(100, 8), t(100, 8), None, t(*past)]
    return outputs("SparseAttentionIndexer", inputs, attributes, count, names=names_of(inputs))


def test_sparse_attention_indexer_qsa():
    selected, key = indexer(QSA, 2)
    assert selected == t(B, S, 19, elem=INT32)  # token_budget + compress_ratio - 1
    assert key == t(B, P + S, None)
    assert indexer(QSA, 2, (2, 3, 128), (2, 10, 32))[1] == t(2, 13, None)


def test_sparse_attention_indexer_csa():
    selected, key, buffer = indexer(CSA, 3)
    assert selected == t(B, S, 8, elem=INT32)
    assert key == buffer == t(None, elem=FLOAT)


@pytest.mark.parametrize("attributes, count, message", [
    ({**QSA, "token_budget": 10}, 2, "divisible"),
    ({**QSA, "policy_mode": "dense"}, 2, "policy_mode"),
    ({**CSA, "index_topk": 0}, 3, "index_topk"),
    (QSA, 3, "2 outputs"),
])
def test_sparse_attention_indexer_errors(attributes, count, message):
    with pytest.raises(InferenceError, match=message):
        indexer(attributes, count)


def test_packed_sparse_attention_indexer_keeps_fixed_state_shapes():
    inputs = [t(TT, 128), t(TT, 32), t(32), t(32), t(100, 8), t(100, 8), t(B + 1, elem=INT32), t(B, elem=INT32),
              None, None, None, None, t(B, 64, 32), t(B, 7, 32), None, t(elem=INT32)]
    found = outputs("PackedSparseAttentionIndexer", inputs, {**QSA, "state_capacity": 64}, 6,
                    names=names_of(inputs))
    assert found[0] == t(TT, 19, elem=INT32) and found[1] == t(TT, elem=INT32)
    assert found[2] == t(B, 64, 32) and found[3] == t(B, 7, 32)


def test_value_present_but_unknown_is_not_a_packed_query():
    """Soundness: a value of unknown shape still means Q, K and V come apart, so the query's shape
    is the output's; only an absent value unpacks the query."""
    assert sparse(t(B, S, 128), t(None), t(None))[0] == t(B, S, 128)
    assert paged(t(N, 128, elem=F16), t(None, elem=F16), t(None, elem=F16), count=1)[0] == t(N, 128, elem=F16)
    assert dynamic(t(B, S, 128), t(None), t(None))[0] == t(B, S, 128)
