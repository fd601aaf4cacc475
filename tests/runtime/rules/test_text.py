"""Tests for the text rules."""
from __future__ import annotations

import pytest

from opspec.runtime.contract import InferenceError
from opspec.runtime.testing import run_rule, t

STRING = 8


def test_string_normalizer_keeps_the_shape_unless_stopwords_may_remove_strings():
    assert run_rule("StringNormalizer", 10, [t(4, elem=STRING)]).output_type(0) == t(4, elem=STRING)
    assert run_rule("StringNormalizer", 10, [t(1, 4, elem=STRING)], {"stopwords": [b"a"]}).output_type(0) == \
        t(1, None, elem=STRING)
    with pytest.raises(InferenceError, match=r"must be \[C\] or \[1, C\]"):
        run_rule("StringNormalizer", 10, [t(2, 4, elem=STRING)])
