"""What a check holds across its phases: integer codes and numbers, no per-row Python object.

A large check holds its inputs and its intermediate results for minutes; these tests pin their
form (dtypes, what is referenced when), never a time or a resident size.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

from evalvalidity.analysis import check, nulls
from evalvalidity.analysis.plan import CheckPlan, DatasetRef, PoolDeclaration, PoolSpec
from evalvalidity.analysis.pools import build_benchmark
from evalvalidity.core.metrics import parse_metric
from evalvalidity.io.scoring import decode_ranking, rank_run, score_run

CODE = pa.dictionary(pa.int32(), pa.string())


def _tables(n_queries: int = 40, depth: int = 7, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    qid, docid, score = [], [], []
    for q in range(n_queries):
        docs = rng.permutation(30)[: int(rng.integers(1, depth + 1))]
        qid += [f"q{q}"] * len(docs)
        docid += [f"d{d}" for d in docs]
        score += rng.integers(0, 4, size=len(docs)).astype(float).tolist()  # ties too
    run = pa.table({"qid": qid, "docid": docid, "score": score})
    judged = [f"q{q}" for q in range(n_queries) if q % 5]  # some queries are not judged
    qrels = pa.table(
        {
            "qid": judged,
            "docid": [f"d{q % 30}" for q in range(len(judged))],
            "rel": [1] * len(judged),
        }
    )
    return run, qrels


@pytest.mark.parametrize("ties", ["trec_eval", "average", "given"])
def test_the_kept_ranking_holds_codes_not_strings(ties):
    run, qrels = _tables()
    run = run.append_column("rank", pa.array(np.arange(1, run.num_rows + 1)))
    scored = score_run(run, qrels, "rr@10", ties=ties, keep_ranking=True, ranking_depth=3)
    kept = scored.ranking
    assert kept is not None
    assert kept.column_names == ["qid", "docid", "position", "tie_start", "tie_size"]
    assert kept.schema.field("qid").type == CODE
    assert kept.schema.field("docid").type == CODE
    for name in ("position", "tie_start", "tie_size"):
        assert kept.schema.field(name).type == pa.int32()
    for chunk in kept.column("qid").chunks:
        # The query codes index the scored queries: their strings are held once, not per row.
        assert chunk.dictionary.to_pylist() == scored.qids.tolist()
    distinct = {d.dictionary.to_pylist().__len__() for d in kept.column("docid").chunks}
    assert max(distinct) <= len(set(run.column("docid").to_pylist()))
    # Decoded, it is the ranking itself (trec_eval's order whatever the scoring policy).
    full = rank_run(run.drop_columns(["rank"]), ties="average")
    judged = set(scored.qids.tolist())
    want = [
        row
        for row in full.select(["qid", "docid", "position", "tie_start", "tie_size"]).to_pylist()
        if row["qid"] in judged and (row["position"] <= 3 or row["tie_start"] <= 3)
    ]
    got = decode_ranking(kept).sort_by([("qid", "ascending"), ("position", "ascending")])
    assert got.to_pylist() == want
    assert got.schema.field("docid").type == pa.string()
    assert got.schema.field("position").type == pa.int64()


def test_the_kept_ranking_codes_as_its_strings_did():
    """code_tables gives the same codes from the kept ranking as from its strings."""
    run, qrels = _tables(seed=3)
    metric = parse_metric("rr@10")
    bench = build_benchmark(qrels, PoolSpec(corpus_size=100), metric)
    kept = score_run(run, qrels, metric, keep_ranking=True, ranking_depth=12).ranking
    assert kept is not None
    coded = nulls.code_tables(bench, qrels, kept, metric.k)
    plain = nulls.code_tables(bench, qrels, decode_ranking(kept), metric.k)
    for name in ("run_query", "run_position", "tie_start", "tie_size", "self_row"):
        np.testing.assert_array_equal(getattr(coded, name), getattr(plain, name), err_msg=name)
    # The vocabularies may list the ranking's ids in another order: the ids are the same.
    assert coded.docids(coded.run_doc) == plain.docids(plain.run_doc)


def test_a_self_hit_is_found_from_codes():
    run = pa.table({"qid": ["a", "a", "b"], "docid": ["a", "x", "a"], "score": [2.0, 1.0, 1.0]})
    qrels = pa.table({"qid": ["a", "b"], "docid": ["x", "x"], "rel": [1, 1]})
    metric = parse_metric("rr@10")
    bench = build_benchmark(qrels, PoolSpec(corpus_size=10), metric)
    kept = score_run(run, qrels, metric, keep_ranking=True, ranking_depth=5).ranking
    coded = nulls.code_tables(bench, qrels, kept, metric.k)
    rows = sorted(
        zip(
            coded.run_query.tolist(),
            coded.docids(coded.run_doc),
            coded.self_row.tolist(),
            strict=True,
        )
    )
    assert rows == [(0, "a", True), (0, "x", False), (1, "a", False)]


@pytest.mark.parametrize("through", ["check_benchmark", "command line"])
def test_a_check_lets_the_run_it_loaded_go_before_the_other_nulls(tmp_path, monkeypatch, through):
    """The loaded run is referenced no more once scored: only its first rows reach the nulls.

    The command line loads the inputs itself and hands them over (before, it kept them until
    the end: 0.2 GB a million queries of 5 rows).
    """
    run, qrels = _tables(n_queries=60)
    run_path, qrels_path = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s} x\n"
            for i, (q, d, s) in enumerate(
                zip(*(run.column(c).to_pylist() for c in ("qid", "docid", "score")), strict=True)
            )
        )
    )
    qrels_path.write_text(
        "".join(
            f"{q} 0 {d} 1\n"
            for q, d in zip(
                qrels.column("qid").to_pylist(), qrels.column("docid").to_pylist(), strict=True
            )
        )
    )
    loaded: list[weakref.ref] = []
    seen: dict[str, object] = {}
    real_load, real_nulls = check.load_inputs, check.other_nulls

    def load(*args, **kwargs):
        inputs = real_load(*args, **kwargs)
        loaded.append(weakref.ref(inputs.run))
        return inputs

    def other(*args, **kwargs):
        gc.collect()
        seen["alive"] = loaded[0]() is not None
        seen["rows"] = kwargs["run"].num_rows
        return real_nulls(*args, **kwargs)

    monkeypatch.setattr(check, "load_inputs", load)
    monkeypatch.setattr(check, "other_nulls", other)
    monkeypatch.setattr(check, "SEGMENT_SAMPLE", 50)
    plan = CheckPlan(
        qrels=DatasetRef.file(str(qrels_path)),
        run=DatasetRef.file(str(run_path)),
        pool=PoolDeclaration(corpus_size=100),
        seeds=4,
    )
    if through == "command line":
        from evalvalidity.cli import main

        argv = ["check", "--run", str(run_path), "--qrels", str(qrels_path), "--pool-size", "100"]
        assert main([*argv, "--seeds", "4", "--format", "json", "--fail-on", "never"]) == 0
        assert seen == {"alive": False, "rows": 50}
        return
    result = check.check_benchmark(plan)
    assert seen == {"alive": False, "rows": 50}
    assert result.run_name == "run" and result.nulls is not None
    assert result.nulls.segments is not None


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("in_rank_order", [False, True])
def test_the_ranking_made_in_memory_is_duckdbs(seed, in_rank_order):
    """Ranked in numpy (sorted or, in rank order already, not), in chunks: DuckDB's ranking."""
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    n = 2_000
    run = pa.table(
        {
            "qid": [f"q{i}" for i in rng.integers(0, 150, n)],
            "docid": [f"d{i}" for i in rng.permutation(n)],
            "score": rng.integers(0, 4, n).astype(float),  # ties
        }
    )
    full = rank_run(run, ties="average").select(
        ["qid", "docid", "position", "tie_start", "tie_size"]
    )
    source = rank_run(run).select(["qid", "docid", "score"]) if in_rank_order else run
    source = pa.Table.from_batches(source.to_batches(max_chunksize=300))
    judged = sorted(set(run.column("qid").to_pylist()))[::2]
    qrels = pa.table({"qid": judged, "docid": ["d1"] * len(judged), "rel": [1] * len(judged)})
    for depth in (1, 3, None):
        kept = score_run(source, qrels, "rr@10", keep_ranking=True, ranking_depth=depth).ranking
        assert kept is not None
        got = decode_ranking(kept).sort_by([("qid", "ascending"), ("position", "ascending")])
        mask = pc.is_in(full["qid"], pa.array(judged))
        if depth is not None:
            near = pc.or_(
                pc.less_equal(full["position"], depth), pc.less_equal(full["tie_start"], depth)
            )
            mask = pc.and_(mask, near)
        assert got.equals(full.filter(mask)), depth


def test_the_kept_ranking_of_chunks_holds_codes_too():
    """With units the ranking comes from DuckDB (documents deduplicated), coded as it leaves."""
    run = pa.table(
        {
            "qid": ["q1", "q1", "q1", "q2"],
            "docid": ["c1", "c2", "c3", "c3"],
            "score": [3.0, 2.0, 1.0, 1.0],
        }
    )
    units = pa.table({"chunk_id": ["c1", "c2", "c3"], "doc_id": ["A", "A", "B"]})
    qrels = pa.table({"qid": ["q1", "q2"], "docid": ["B", "B"], "rel": [1, 1]})
    kept = score_run(run, qrels, "rr@10", units=units, keep_ranking=True, ranking_depth=5).ranking
    assert kept is not None
    assert kept.schema.field("qid").type == CODE and kept.schema.field("docid").type == CODE
    assert kept.schema.field("position").type == pa.int32()
    got = decode_ranking(kept).sort_by([("qid", "ascending"), ("position", "ascending")])
    assert got.select(["qid", "docid", "position"]).to_pylist() == [
        {"qid": "q1", "docid": "A", "position": 1},
        {"qid": "q1", "docid": "B", "position": 2},
        {"qid": "q2", "docid": "B", "position": 1},
    ]


def test_the_coded_tables_hold_int32_codes():
    """Several codes per ranked row are held through every null: int32, not int64."""
    run, qrels = _tables()
    metric = parse_metric("rr@10")
    bench = build_benchmark(qrels, PoolSpec(corpus_size=100), metric)
    scored = score_run(run, qrels, metric, keep_ranking=True, ranking_depth=20)
    coded = nulls.code_tables(bench, qrels, scored.ranking, metric.k)
    assert len(coded.run_query) > 0 and coded.tie_start is not None
    for name in ("run_query", "run_doc", "run_position", "tie_start", "tie_size"):
        assert getattr(coded, name).dtype == np.int32, name
    for name in ("gold_query", "gold_doc", "gold_grade"):
        assert getattr(coded, name).dtype == np.int32, name


def test_the_shuffle_null_reads_sorted_int32_codes_in_place(monkeypatch):
    """Rows already by query, in int32: the join reads them without an int64 or sorted copy."""
    from evalvalidity.core import nulls as core_nulls

    query = np.array([0, 0, 1, 1, 2], np.int32)
    doc = np.array([7, 5, 7, 6, 5], np.int32)
    position = np.array([1, 2, 1, 2, 1], np.int32)
    seen: list[np.ndarray] = []
    real = core_nulls._pair_values

    def spy(metric, run, *args, **kwargs):
        seen.extend(run)
        return real(metric, run, *args, **kwargs)

    monkeypatch.setattr(core_nulls, "_pair_values", spy)
    null = core_nulls.query_shuffle_null(
        query, doc, position, [0, 1, 2], [7, 7, 5], [1, 1, 1], metric="rr@10", n_queries=3
    )
    assert null.n_pairs_hit > 0 and len(seen) == 3
    for given, read in zip((query, doc, position), seen, strict=True):
        assert read.dtype == np.int32 and np.shares_memory(read, given)


def test_the_triage_rows_are_built_after_the_other_nulls(monkeypatch):
    """The triage table is not held while the other nulls hold their codes (their peak)."""
    run, qrels = _tables()
    calls: list[str] = []
    real_triage, real_nulls = check.triage, check.other_nulls

    def triage(*args, **kwargs):
        calls.append("triage")
        return real_triage(*args, **kwargs)

    def other(*args, **kwargs):
        calls.append("other_nulls")
        return real_nulls(*args, **kwargs)

    monkeypatch.setattr(check, "triage", triage)
    monkeypatch.setattr(check, "other_nulls", other)
    result = check.check_tables(run, qrels, pool=PoolSpec(corpus_size=100), seeds=4)
    assert calls == ["other_nulls", "triage"]
    assert len(result.queries) == len(set(qrels.column("qid").to_pylist()))


def test_the_benchmark_holds_no_python_str_per_query():
    """Query ids are numpy's variable-width strings (every character kept), not objects."""
    qrels = pa.table(
        {"qid": ["b", "a\x00", "a", "é", "b"], "docid": ["x", "y", "z", "x", "y"], "rel": [1] * 5}
    )
    bench = build_benchmark(qrels, PoolSpec(corpus_size=10), parse_metric("rr@10"))
    assert isinstance(bench.qids.dtype, np.dtypes.StringDType)
    assert bench.qids.tolist() == ["a", "a\x00", "b", "é"]  # code-point order, NULs kept
    result = check.check_tables(None, qrels, pool=PoolSpec(corpus_size=10), seeds=4)
    assert sorted(result.queries.qid.tolist()) == ["a", "a\x00", "b", "é"]


def test_above_beside_queries_the_other_nulls_run_before_check1(monkeypatch):
    """A large check runs the other nulls before Check 1, with the same JSON as beside it.

    Check 1's draws then do not add to the nulls' peak, nor the kept ranking (which the nulls
    free once coded) to Check 1's.
    """
    from evalvalidity.report import records

    run, qrels = _tables(n_queries=60)
    pool = PoolSpec(corpus_size=100)
    beside = records.to_json(check.check_tables(run, qrels, pool=pool, seeds=4, seed=3))
    calls: list[str] = []
    kept: list[weakref.ref] = []
    real_score, real_check1, real_nulls = check.score_run, check.builtin_check1, check.other_nulls

    def score(*args, **kwargs):
        scored = real_score(*args, **kwargs)
        kept.append(weakref.ref(scored.ranking))
        return scored

    def check1(*args, **kwargs):
        gc.collect()
        calls.append("check1" if kept[0]() is None else "check1 holding the ranking")
        return real_check1(*args, **kwargs)

    def other(*args, **kwargs):
        calls.append("other_nulls")
        return real_nulls(*args, **kwargs)

    monkeypatch.setattr(check, "BESIDE_QUERIES", 10)
    monkeypatch.setattr(check, "score_run", score)
    monkeypatch.setattr(check, "builtin_check1", check1)
    monkeypatch.setattr(check, "other_nulls", other)
    first = records.to_json(check.check_tables(run, qrels, pool=pool, seeds=4, seed=3))
    assert calls == ["other_nulls", "check1"]
    assert first == beside


def test_a_check_lets_the_run_go_before_it_aligns_the_scores(monkeypatch):
    """The loaded run (its ranking kept) is referenced no more when the scores are aligned."""
    run, qrels = _tables(n_queries=60)
    seen: list[bool] = []
    real_aligned = check.aligned
    held = [weakref.ref(run)]

    def aligned(*args, **kwargs):
        gc.collect()
        seen.append(held[0]() is not None)
        return real_aligned(*args, **kwargs)

    monkeypatch.setattr(check, "aligned", aligned)
    monkeypatch.setattr(check, "SEGMENT_SAMPLE", 50)  # the nulls' copy of its first rows
    pool = PoolSpec(corpus_size=100)
    plan = check.plan_for_tables(pool, seeds=4)
    inputs = [check.CheckInputs(pool=pool, run=run, qrels=qrels)]
    del run
    result = check.check_benchmark(plan, inputs.pop(), release_inputs=True)
    assert seen == [False]
    assert result.nulls is not None and result.nulls.holes is not None
