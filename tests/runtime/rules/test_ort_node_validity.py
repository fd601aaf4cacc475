"""Nodes whose own shapes and attributes onnxruntime refuses, though their schema allows them: each is
a node error in opspec, held against onnxruntime's refusal, beside a valid neighbour that
onnxruntime runs and opspec accepts. Where this machine has no kernel for the op, the onnxruntime
side is skipped and opspec's answer is held all the same."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ort_oracle import F, I64, U8, Case, Const, In  # noqa: E402
from ort_validity import assert_accepted_by_both, assert_refused_by_both  # noqa: E402

MS = "com.microsoft"


# ------------------------------------------------------------------------------------------------ MatMulFpQ4

def fp_q4(blob_bytes: int, quant_type: int = 1) -> Case:
    """A (M, 52) times a packed (52, 8) weight."""
    return Case("MatMulFpQ4", MS, [In(F, ("M", 52)), Const([0] * blob_bytes, U8), Const([52, 8], I64)],
                {"blk_quant_type": quant_type})


def test_matmul_fp_q4_blob_size():
    # 8 columns of ceil(52 / 32) = 2 blocks: 21 bytes each with offsets, 20 without; blocks of 64: 36 bytes
    assert_accepted_by_both(fp_q4(8 * 2 * 21), [{"M": 3}])
    assert_accepted_by_both(fp_q4(8 * 2 * 20, 0), [{"M": 3}])
    assert_accepted_by_both(fp_q4(8 * 1 * 36, 2), [{"M": 3}])
    assert_refused_by_both(fp_q4(8 * 2 * 21 - 1), "B holds 335 bytes", [{"M": 3}], "wrong size")
    assert_refused_by_both(fp_q4(8 * 2 * 21, 0), "needs 320", [{"M": 3}], "wrong size")
