import pytest

from evalvalidity.core.metrics import FAMILIES, Metric, parse_metric, parse_metrics
from evalvalidity.errors import ParameterError

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
            "Unknown metric 'bleu@4'; expected a spelling such as rr@10, hit@10, p@10, r@100, rprec, ap, ap@100, ndcg@10, ndcg_exp@10.",
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
            "Cannot read the metric 'p@5 extra'; expected a spelling such as rr@10, hit@10, p@10, r@100, rprec, ap, ap@100, ndcg@10, ndcg_exp@10.",
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
