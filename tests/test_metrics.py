import ir_measures
import numpy as np
import pytest

from evalvalidity.core.kernels import Hits, Judged, evaluate
from evalvalidity.core.metrics import (
    FAMILIES,
    FAMILY_SPECS,
    FamilySpec,
    Metric,
    family_spec,
    parse_metric,
    parse_metrics,
)
from evalvalidity.errors import ParameterError

OTHER_FORMS = (
    " trec_eval's names (P_10, recall_100, success_10, map_cut_10, ndcg_cut_10, recip_rank,"
    " Rprec, map, ndcg) and ir_measures' (nDCG@10, P(rel=2)@10, RR(rel=2)@10,"
    " nDCG(dcg='exp-log2')@10) are read too."
)

ALL_METRICS = [
    Metric("rr"),
    Metric("rr", 10),
    Metric("rr", 1000, 2),
    Metric("hit", 1),
    Metric("hit", 10),
    Metric("hit", 5, 3),
    Metric("p", 5),
    Metric("p", 10, 2),
    Metric("r", 100),
    Metric("r", 1000, 2),
    Metric("rprec"),
    Metric("rprec", None, 2),
    Metric("ap"),
    Metric("ap", 10),
    Metric("ap", 100, 4),
    Metric("ndcg"),
    Metric("ndcg", 10),
    Metric("ndcg_exp"),
    Metric("ndcg_exp", 20),
]


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda m: m.name)
def test_canonical_spelling_round_trips(metric):
    assert parse_metric(metric.name) == metric
    assert parse_metric(metric.name.upper()) == metric
    assert parse_metric(metric) is metric


def test_every_family_is_covered_by_the_round_trip():
    assert {m.family for m in ALL_METRICS} == set(FAMILIES)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("mrr@10", "rr@10"),
        ("MRR@10", "rr@10"),
        ("mrr", "rr"),
        ("recip_rank", "rr"),
        ("success@10", "hit@10"),
        ("Success@1", "hit@1"),
        ("P@5", "p@5"),
        ("precision@5", "p@5"),
        ("recall@100", "r@100"),
        ("R@100", "r@100"),
        ("Rprec", "rprec"),
        ("r-prec", "rprec"),
        ("map", "ap"),
        ("MAP@100", "ap@100"),
        ("nDCG@10", "ndcg@10"),
        ("ndcg_exp@10", "ndcg_exp@10"),
        ("mrr@10[rel>=2]", "rr@10[rel>=2]"),
        (" hit @ 10 [ rel >= 3 ] ", "hit@10[rel>=3]"),
        ("p@5[rel>=1]", "p@5"),
    ],
)
def test_aliases_read_to_one_canonical_spelling(alias, canonical):
    assert parse_metric(alias).name == canonical


@pytest.mark.parametrize(
    ("metric", "trec_name"),
    [
        ("rr", "recip_rank"),
        ("rr@10", None),
        ("p@5", "P_5"),
        ("hit@10", "success_10"),
        ("r@100", "recall_100"),
        ("rprec", "Rprec"),
        ("ap", "map"),
        ("ap@10", "map_cut_10"),
        ("ndcg@10", "ndcg_cut_10"),
        ("ndcg", "ndcg"),
        ("ndcg_exp@10", None),
        ("p@5[rel>=2]", None),
    ],
)
def test_trec_eval_names(metric, trec_name):
    m = parse_metric(metric)
    assert m.trec_name == trec_name
    assert m.report_name == (trec_name or m.name)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "mrr@ten",
            "Cannot read the metric 'mrr@ten': the cutoff must be a whole number >= 1, as in mrr@10.",
        ),
        (
            "p@0",
            "Cannot read the metric 'p@0': the cutoff must be a whole number >= 1, as in p@10.",
        ),
        (
            "bleu@4",
            "Unknown metric 'bleu@4'; expected a spelling such as rr@10, hit@10, p@10, r@100, rprec, ap, ap@100, ndcg@10, ndcg_exp@10."
            + OTHER_FORMS,
        ),
        ("p", "The metric p needs a cutoff, e.g. p@10."),
        ("rprec@10", "The metric rprec takes no cutoff."),
        ("ndcg@10[rel>=2]", "ndcg uses graded gains and takes no relevance threshold."),
        (
            "hit@10[rel>=0]",
            "Cannot read the metric 'hit@10[rel>=0]': the relevance threshold must be a whole number >= 1, as in hit@10[rel>=2].",
        ),
        (
            "p@5 extra",
            "Cannot read the metric 'p@5 extra'; expected a spelling such as rr@10, hit@10, p@10, r@100, rprec, ap, ap@100, ndcg@10, ndcg_exp@10."
            + OTHER_FORMS,
        ),
    ],
)
def test_unreadable_metrics_say_what_was_expected(text, message):
    with pytest.raises(ParameterError) as info:
        parse_metric(text)
    assert str(info.value) == message


def test_metric_constructor_validates():
    with pytest.raises(
        ParameterError, match=r"^The cutoff of p@0 must be an int >= 1\. Got 0 instead\.$"
    ):
        Metric("p", 0)
    with pytest.raises(ParameterError, match=r"^Unknown metric family 'mrr'"):
        Metric("mrr", 10)
    with pytest.raises(ParameterError, match="must be an int >= 1. Got True instead."):
        Metric("p", True)
    with pytest.raises(ParameterError, match="A metric must be given as text. Got 10 instead."):
        parse_metric(10)


def test_parse_metrics_reads_lists_and_drops_repeats():
    assert [m.name for m in parse_metrics(["mrr@10,ndcg@10", "rr@10", Metric("ap")])] == [
        "rr@10",
        "ndcg@10",
        "ap",
    ]
    with pytest.raises(ParameterError, match="At least one metric is needed."):
        parse_metrics(" , ")


# ------------------------------------------------------------------ the registry


def test_registry_lists_every_family_once_in_display_order():
    assert tuple(FAMILY_SPECS) == FAMILIES == (
        "rr", "hit", "p", "r", "rprec", "ap", "ndcg", "ndcg_exp"
    )  # fmt: skip
    for name, spec in FAMILY_SPECS.items():
        assert isinstance(spec, FamilySpec) and spec.name == name
        assert family_spec(name) is spec
        assert spec.graded is not spec.binary
        assert spec.accepts_k or not spec.needs_k
        assert spec.formula and "\n" not in spec.formula and "\\" not in spec.formula
        assert spec.math.count("{") == spec.math.count("}")
        for alias in spec.aliases:
            assert family_spec(alias) is spec
    with pytest.raises(TypeError):
        FAMILY_SPECS["rr"] = FAMILY_SPECS["hit"]  # type: ignore[index]


def test_registry_flags():
    invertible = [f for f, s in FAMILY_SPECS.items() if s.invertible]
    exact = [f for f, s in FAMILY_SPECS.items() if s.exact_under_dedup]
    graded = [f for f, s in FAMILY_SPECS.items() if s.graded]
    assert invertible == ["rr", "hit", "p", "r", "rprec", "ap"]
    assert exact == ["rr", "hit"]
    assert graded == ["ndcg", "ndcg_exp"]
    assert FAMILY_SPECS["ndcg_exp"].trec_eval is None
    assert FAMILY_SPECS["ndcg_exp"].trec_eval_cut is None
    assert "trec_eval has no exponential-gain nDCG" in FAMILY_SPECS["ndcg_exp"].note


def test_family_spec_rejects_unknown_names():
    with pytest.raises(ParameterError) as info:
        family_spec("bleu")
    assert str(info.value) == (
        "Unknown metric family 'bleu'; expected one of rr, hit, p, r, rprec, ap, ndcg, ndcg_exp."
    )


# ------------------------------------------------------- trec_eval and ir_measures names


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda m: m.name)
def test_trec_eval_and_ir_measures_names_round_trip(metric):
    if metric.trec_name is not None:
        assert parse_metric(metric.trec_name) == metric
    assert parse_metric(metric.ir_measures_name) == metric


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("P_10", "p@10"),
        ("P.10", "p@10"),
        ("p_5", "p@5"),
        ("ndcg_cut_10", "ndcg@10"),
        ("ndcg_cut.10", "ndcg@10"),
        ("recall_100", "r@100"),
        ("map_cut_10", "ap@10"),
        ("success_10", "hit@10"),
        ("recip_rank", "rr"),
        ("Rprec", "rprec"),
        ("map", "ap"),
        ("ndcg", "ndcg"),
        ("nDCG@10", "ndcg@10"),
        ("NDCG", "ndcg"),
        ("nDCG", "ndcg"),
        ("P(rel=2)@10", "p@10[rel>=2]"),
        ("RR@10", "rr@10"),
        ("RR(rel=2)@10", "rr@10[rel>=2]"),
        ("RR(rel=2)", "rr[rel>=2]"),
        ("R@100", "r@100"),
        ("R(rel=3)@100", "r@100[rel>=3]"),
        ("AP", "ap"),
        ("AP@10", "ap@10"),
        ("AP(rel=2)", "ap[rel>=2]"),
        ("Success@10", "hit@10"),
        ("Success(rel=2)@10", "hit@10[rel>=2]"),
        ("Rprec(rel=2)", "rprec[rel>=2]"),
        ("nDCG(dcg='exp-log2')@10", "ndcg_exp@10"),
        ('nDCG(dcg="exp-log2")', "ndcg_exp"),
        ("nDCG(dcg='log2')@10", "ndcg@10"),
        ("P( rel = 2 ) @ 10", "p@10[rel>=2]"),
    ],
)
def test_trec_eval_and_ir_measures_spellings(spelling, canonical):
    assert parse_metric(spelling).name == canonical


@pytest.mark.parametrize(
    ("metric", "measure"),
    [
        (Metric("rr"), ir_measures.RR),
        (Metric("rr", 10), ir_measures.RR @ 10),
        (Metric("rr", 1000, 2), ir_measures.RR(rel=2) @ 1000),
        (Metric("hit", 10), ir_measures.Success @ 10),
        (Metric("hit", 5, 3), ir_measures.Success(rel=3) @ 5),
        (Metric("p", 5), ir_measures.P @ 5),
        (Metric("p", 10, 2), ir_measures.P(rel=2) @ 10),
        (Metric("r", 100), ir_measures.R @ 100),
        (Metric("r", 1000, 2), ir_measures.R(rel=2) @ 1000),
        (Metric("rprec"), ir_measures.Rprec),
        (Metric("rprec", None, 2), ir_measures.Rprec(rel=2)),
        (Metric("ap"), ir_measures.AP),
        (Metric("ap", 10), ir_measures.AP @ 10),
        (Metric("ap", 100, 4), ir_measures.AP(rel=4) @ 100),
        (Metric("ndcg"), ir_measures.nDCG),
        (Metric("ndcg", 10), ir_measures.nDCG @ 10),
        (Metric("ndcg_exp"), ir_measures.nDCG(dcg="exp-log2")),
        (Metric("ndcg_exp", 20), ir_measures.nDCG(dcg="exp-log2") @ 20),
    ],
    ids=lambda x: x.name if isinstance(x, Metric) else str(x),
)
def test_ir_measures_reads_our_name_as_the_same_measure(metric, measure):
    parsed = ir_measures.parse_measure(metric.ir_measures_name)
    assert parsed == measure
    assert parsed.NAME == FAMILY_SPECS[metric.family].ir_measures
    assert str(parsed) == metric.ir_measures_name


def test_ir_measures_computes_what_we_compute():
    """Where ir_measures' default provider computes a family, its values equal ours."""
    rng = np.random.default_rng(11)
    qrels, run, queries = [], [], []
    for q in range(12):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(30)]
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=30)
        grades[rng.integers(30)] = max(1, grades.max())  # every query has a relevant item
        qrels += [ir_measures.Qrel(qid, d, int(g)) for d, g in zip(docs, grades, strict=True)]
        qrels.append(ir_measures.Qrel(qid, "unretrieved", 1))
        order = rng.permutation(30)[:20]
        run += [ir_measures.ScoredDoc(qid, docs[i], float(20 - r)) for r, i in enumerate(order)]
        queries.append((grades, order))
    hit_query, hit_position, hit_grade, judged_query, judged_grade = [], [], [], [], []
    for q, (grades, order) in enumerate(queries):
        for r, i in enumerate(order):
            if grades[i] > 0:
                hit_query.append(q)
                hit_position.append(r + 1)
                hit_grade.append(int(grades[i]))
        positive = [int(g) for g in grades if g > 0] + [1]
        judged_query += [q] * len(positive)
        judged_grade += positive
    hits = Hits(query=hit_query, position=hit_position, grade=hit_grade)
    judged = Judged.from_items(query=judged_query, grade=judged_grade, n_queries=len(queries))
    spellings = ["rr", "rr@5", "rr@5[rel>=2]", "hit@3", "hit@3[rel>=3]", "p@5", "p@10[rel>=2]"]
    spellings += ["r@10", "r@10[rel>=2]", "rprec", "rprec[rel>=2]", "ap", "ap@10", "ap[rel>=2]"]
    spellings += ["ndcg", "ndcg@10"]
    metrics = [parse_metric(s) for s in spellings]
    measures = [ir_measures.parse_measure(m.ir_measures_name) for m in metrics]
    theirs = {(r.query_id, r.measure): r.value for r in ir_measures.iter_calc(measures, qrels, run)}
    for metric, measure in zip(metrics, measures, strict=True):
        ours = evaluate(metric, hits, judged)
        expected = [theirs[(f"q{q}", measure)] for q in range(len(queries))]
        np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12, err_msg=metric.name)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "P(judged_only=True)@10",
            "Cannot read the metric 'P(judged_only=True)@10': of ir_measures' parameters only"
            " rel=n (n >= 1) and, for nDCG, dcg='log2' or dcg='exp-log2' are read. Got"
            " 'judged_only=True' instead.",
        ),
        (
            "P(rel=0)@10",
            "Cannot read the metric 'P(rel=0)@10': of ir_measures' parameters only rel=n"
            " (n >= 1) and, for nDCG, dcg='log2' or dcg='exp-log2' are read. Got 'rel=0'"
            " instead.",
        ),
        ("nDCG(rel=2)@10", "ndcg uses graded gains and takes no relevance threshold."),
        (
            "BLEU(rel=2)@4",
            "Unknown metric 'BLEU(rel=2)@4'; expected a spelling such as rr@10, hit@10, p@10,"
            " r@100, rprec, ap, ap@100, ndcg@10, ndcg_exp@10." + OTHER_FORMS,
        ),
        (
            "P(rel=2)@ten",
            "Cannot read the metric 'P(rel=2)@ten': the cutoff must be a whole number >= 1,"
            " as in p@10.",
        ),
        (
            "ndcg_cut",
            "Unknown metric 'ndcg_cut'; expected a spelling such as rr@10, hit@10,"
            " p@10, r@100, rprec, ap, ap@100, ndcg@10, ndcg_exp@10." + OTHER_FORMS,
        ),
        (
            "P_0",
            "Cannot read the metric 'P_0': the cutoff must be a whole number >= 1, as in p@10.",
        ),
    ],
)
def test_unreadable_trec_eval_and_ir_measures_spellings(text, message):
    with pytest.raises(ParameterError) as info:
        parse_metric(text)
    assert str(info.value) == message
