"""Doctest names shared by the package's docstrings (pytest's ``doctest_namespace``)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session", autouse=True)
def _doctest_check_result(doctest_namespace: dict[str, Any]) -> None:
    """``result``: a two-query check of ``check_tables``, for the report's doctests.

    Query 1 ranks its gold item first, query 2 second, in a corpus of 20 items (8 seeds).
    """
    import pyarrow as pa

    from evalvalidity.analysis.check import PoolSpec, check_tables

    qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    run = pa.table(
        {"qid": ["1", "1", "2", "2"], "docid": ["a", "c", "c", "b"], "score": [2.0, 1.0, 2.0, 1.0]}
    )
    doctest_namespace["result"] = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=8)
