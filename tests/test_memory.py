"""The per-query benchmark is columnar: CSR arrays, not one Python list entry per query."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import build_benchmark, simulation_layout, sorted_unique
from evalvalidity.core.metrics import parse_metric

QRELS = pa.table(
    {
        "qid": ["q2", "q1", "q1", "q3", "q1", "q2", "q2", "q1"],
        "docid": ["b", "c", "a", "x", "c", "d", "a", "z"],
        "rel": [2, 1, 3, 0, 1, 1, 0, 2],
    }
)


def test_benchmark_holds_csr_arrays_of_the_judged_items():
    bench = build_benchmark(QRELS, PoolSpec(corpus_size=20), parse_metric("ndcg@10"))
    assert bench.qids.tolist() == ["q1", "q2", "q3"]
    # q1 judges c (twice), a, z; q2 judges b, d (a is rel 0); q3 nothing relevant. A sized
    # pool lists each query's judged items best grade first.
    assert bench.pool_offsets.tolist() == [0, 3, 5, 5]
    assert bench.pool_docs.tolist() == ["a", "z", "c", "b", "d"]
    assert bench.pool_gains.tolist() == [3, 2, 1, 2, 1]
    assert bench.judged_offsets.tolist() == [0, 3, 5, 5]
    assert bench.duplicated.tolist() == [1, 0, 0]
    assert bench.in_pool.tolist() == [3, 2, 0]
    assert [g.tolist() for g in bench.gains] == [[3, 2, 1], [2, 1], []]
    small = build_benchmark(QRELS, PoolSpec(corpus_size=2), parse_metric("ndcg@10"))
    assert small.pool_offsets.tolist() == [0, 2, 4, 4]
    assert small.pool_docs.tolist() == ["a", "z", "b", "d"]
    for name in ("pool_gains", "pool_docs", "judged_grades"):
        assert getattr(bench, name).ndim == 1


def test_units_and_candidates_are_csr_and_match_per_query_lists():
    units = pa.table(
        {"chunk_id": ["a#0", "b#0", "a#1", "c#0", "z#0", "z#1"]},
    ).append_column("doc_id", pa.array(["a", "b", "a", "c", "z", "z"]))
    pool = PoolSpec(units=units)
    bench = build_benchmark(QRELS, pool, parse_metric("rr@10"))
    assert bench.gold_doc_index is not None and bench.doc_ids is not None
    assert bench.gold_doc_index.shape == (int(bench.pool_offsets[-1]),)
    assert bench.doc_ids[bench.gold_doc_index].tolist() == ["c", "a", "z", "b"]
    layout, name = simulation_layout(bench, pool)
    assert layout.gold_offsets.shape == (len(bench.qids) + 1,)
    # Every chunk of each gold document: q1 has c (1 chunk), a (2), z (2); q2 has b (1).
    assert layout.gold_offsets.tolist() == [0, 5, 6, 6]
    names = name(np.zeros(5, np.int64), layout.gold_items[:5]).to_pylist()
    assert names == ["c#0", "a#0", "a#1", "z#0", "z#1"]

    cands = pa.table({"qid": ["q1", "q1", "q2", "q2", "q3", "q1"], "docid": list("zbdbqz")})
    pool = PoolSpec(candidates=cands)
    bench = build_benchmark(QRELS, pool, parse_metric("rr@10"))
    assert bench.candidate_offsets is not None and bench.candidate_docs is not None
    assert bench.candidate_offsets.tolist() == [0, 2, 4, 5]
    assert bench.candidate_docs.tolist() == ["b", "z", "b", "d", "q"]
    assert bench.pool_size.tolist() == [2, 2, 1]
    layout, name = simulation_layout(bench, pool)
    # q1's gold in its list (b, z): z at 1; q2's (b, d): both.
    assert layout.gold_offsets.tolist() == [0, 1, 3, 3]
    assert layout.gold_items.tolist() == [1, 0, 1]
    assert name(np.array([0, 1, 2]), np.array([0, 1, 0])).to_pylist() == ["b", "d", "q"]


def test_sorted_unique_orders_as_python_str():
    values = ["é", "b", "a\x00", "a", "Z", "\U0001f600", "b"]
    distinct, index = sorted_unique(pa.chunked_array([values[:3], values[3:]]))
    assert distinct.to_pylist() == sorted(set(values))
    assert [distinct[i].as_py() for i in index.tolist()] == values


def test_streamed_json_is_byte_identical_to_dumping_the_dict(monkeypatch):
    import io
    import json

    from evalvalidity.analysis.check import check_tables
    from evalvalidity.report import records

    qids = ['q"1', "q\\2", "é\u2028", "tab\tq", "q5", "q6"]
    qrels = pa.table(
        {
            "qid": [*qids, "q5", "q6"],
            "docid": ["a", "b", "c", "d", "e", "f", "e", "g"],
            "rel": [1, 1, 2, 0, 1, 1, 1, 1],
        }
    )
    run = pa.table({"qid": qids[:3], "docid": ["a", "x", "c"], "score": [1.0, 1.0, 1.0]})
    result = check_tables(run, qrels, pool=PoolSpec(corpus_size=12), seeds=4)
    assert any(result.queries.flags) and not all(result.queries.flags)
    expected = json.dumps(records.to_dict(result), indent=2, ensure_ascii=False, allow_nan=False)
    assert records.to_json(result) == expected
    monkeypatch.setattr(records, "_JSON_BLOCK", 4)  # rows formatted in several blocks
    handle = io.StringIO()
    records.write_json(result, handle)
    assert handle.getvalue() == expected
