"""Tests for the text rules."""
from __future__ import annotations

import pytest
from ruletest import run, t

from opspec.runtime.contract import InferenceError

STRING = 8


def test_string_normalizer_keeps_the_shape_unless_stopwords_may_remove_strings():
    assert run("StringNormalizer", 10, [t(4, elem=STRING)]).output_type(0) == t(4, elem=STRING)
    assert run("StringNormalizer", 10, [t(1, 4, elem=STRING)], {"stopwords": [b"a"]}).output_type(0) == \
        t(1, None, elem=STRING)
    with pytest.raises(InferenceError, match=r"must be \[C\] or \[1, C\]"):
        run("StringNormalizer", 10, [t(2, 4, elem=STRING)])
