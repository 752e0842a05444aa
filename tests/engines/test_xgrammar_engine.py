from __future__ import annotations

import importlib.util

import pytest

from conformbench.engines.base import engines
from conformbench.errors import UsageError

HAVE_XGRAMMAR = importlib.util.find_spec("xgrammar") is not None


@pytest.mark.skipif(HAVE_XGRAMMAR, reason="xgrammar is installed: the missing-extra path cannot be seen")
def test_xgrammar_without_the_extra_names_the_extra(llama_backend, person_schema):
    engine = engines.get("xgrammar")()
    assert "conformbench[xgrammar]" in (engine.availability() or "")
    with pytest.raises(UsageError, match=r"pip install 'conformbench\[xgrammar\]'"):
        engine.compile(person_schema, llama_backend.vocabulary)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_XGRAMMAR, reason="xgrammar extra not installed (pip install 'conformbench[xgrammar]')")
def test_xgrammar_constrains_to_a_valid_object(constrained, person_schema, assert_schema_valid):
    assert_schema_valid(constrained(person_schema, "xgrammar"), person_schema)
