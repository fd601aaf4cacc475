"""Node validity against onnxruntime: a node onnxruntime refuses must be a node error in opspec,
and its valid neighbour must run in onnxruntime and be accepted by opspec.

    refusal = refused(case, {"B": 2})        # onnxruntime's message, or None when the node ran
    errors = opspec_errors(case)             # opspec's node errors, as text

A case's inputs are fed with random data at one setting of the symbols, as
:mod:`ort_oracle` does. Where the machine lacks the kernel (MatMulFpQ4 without AVX-512, say),
onnxruntime refuses every node alike; the assertions then skip the onnxruntime side and hold
opspec's answer all the same.
"""
from __future__ import annotations

from typing import Sequence

import opspec
from ort_oracle import Case, model_of, run_ort

#: Phrases of onnxruntime's refusals that say the machine lacks the kernel, not that the node is wrong.
_MISSING_KERNEL = ("not yet supported on this hardware platform", "Could not find an implementation")


def refused(case: Case, setting: dict[str, int] | None = None) -> str | None:
    """onnxruntime's message when it refuses to load or run ``case`` at ``setting``; None when it runs."""
    try:
        run_ort(model_of(case), case, setting or {})
    except Exception as error:  # noqa: BLE001 - any refusal of onnxruntime's, at load or at run
        return str(error)
    return None


def kernel_missing(message: str | None) -> bool:
    """Whether a refusal says this machine has no kernel for the node (not that the node is wrong)."""
    return message is not None and any(phrase in message for phrase in _MISSING_KERNEL)


def opspec_errors(case: Case) -> list[str]:
    """opspec's node errors on ``case``'s one-node model."""
    result = opspec.infer(model_of(case), data_prop=True)
    return [str(error) for error in result.errors]


def assert_refused_by_both(case: Case, match: str, settings: Sequence[dict[str, int]] = ({},),
                           ort_match: str | None = None) -> None:
    """onnxruntime refuses ``case`` at every setting (unless it lacks the kernel) and opspec reports
    one node error whose message contains ``match`` (``ort_match``, when given, is part of
    onnxruntime's message: the refusal is for the reason the test means)."""
    for setting in settings:
        message = refused(case, setting)
        assert message is not None, f"onnxruntime ran {case.op} at {setting}"
        if ort_match is not None and not kernel_missing(message):
            assert ort_match in message, message
    errors = opspec_errors(case)
    assert len(errors) == 1 and match in errors[0], errors


def assert_accepted_by_both(case: Case, settings: Sequence[dict[str, int]] = ({},)) -> None:
    """onnxruntime runs ``case`` at every setting and opspec reports no node error."""
    for setting in settings:
        message = refused(case, setting)
        assert message is None or kernel_missing(message), message
    assert opspec_errors(case) == []
