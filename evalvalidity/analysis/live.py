"""The live noise test (Check 2): the same retrieval with real vectors and with noise, scored.

:func:`noise_test` is the glue: it embeds, ranks and swaps in noise with the numpy-only parts in
:mod:`evalvalidity.core.embed` (:class:`~evalvalidity.core.embed.HashingEmbedder`,
:func:`~evalvalidity.core.embed.noise_like`, :func:`~evalvalidity.core.embed.exact_cosine_topk`,
:func:`~evalvalidity.core.embed.embed_and_rank`), then hands both rankings to
:func:`evalvalidity.analysis.check.check_benchmark`.

Importing this module needs numpy only; pyarrow and the checks are imported when
:func:`noise_test` runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from evalvalidity.core._validate import _int_at_least, _show
from evalvalidity.core.embed import (
    Ranking,
    _check_embed,
    _embed_both,
    _noise_like,
    _rank,
    _texts_by_id,
)
from evalvalidity.errors import FileFormatError, ParameterError

__all__ = ["noise_test", "read_texts"]

_ID_KEYS = ("_id", "id", "docid", "doc_id", "qid", "query_id")


def read_texts(path: str, what: str = "texts") -> list[tuple[str, str]]:
    r"""(id, text) pairs of a corpus or a query file, in file order.

    JSON Lines in BEIR's layout (``{"_id": ..., "title": ..., "text": ...}``; the id may also
    be ``id``, ``docid``, ``doc_id``, ``qid`` or ``query_id``; a title is put before the text)
    or tab-separated ``id<TAB>text`` lines (MS MARCO's collection and queries). Blank lines are
    skipped; a bad line raises :class:`~evalvalidity.errors.FileFormatError` with its number.

    Parameters
    ----------
    path : str
        The file (UTF-8).
    what : str
        How messages name it ("the corpus").

    Returns
    -------
    list of (str, str)

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> name = os.path.join(folder, "corpus.jsonl")
    >>> with open(name, "w", encoding="utf-8") as handle:
    ...     _ = handle.write('{"_id": "d1", "title": "Wings", "text": "Lift and drag."}\n')
    >>> read_texts(name)
    [('d1', 'Wings Lift and drag.')]
    """
    import json
    import os

    name = os.path.basename(path) or path
    try:
        handle = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise ParameterError(f"Cannot read {what} {path!r}: {exc.strerror}.") from exc
    pairs: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    with handle:
        try:
            lines = handle.read().splitlines()
        except UnicodeDecodeError as exc:
            raise FileFormatError(name, None, f"{what} is not UTF-8 text ({exc.reason})") from exc
    for number, line in enumerate(lines, start=1):
        if number == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise FileFormatError(name, number, f"invalid JSON ({exc})", line) from exc
            key = next((k for k in _ID_KEYS if isinstance(obj, dict) and k in obj), None)
            if key is None or not isinstance(obj.get("text"), str):
                raise FileFormatError(
                    name,
                    number,
                    'expected an object with an id ("_id" or "id") and a "text" string',
                    line,
                )
            ident = obj[key]
            if isinstance(ident, bool) or not isinstance(ident, str | int):
                raise FileFormatError(
                    name, number, f"expected a string or integer {key!r}, found {ident!r}", line
                )
            title = obj.get("title")
            text = (
                obj["text"] if not isinstance(title, str) or not title else f"{title} {obj['text']}"
            )
            ident = str(ident)
        else:
            ident, tab, text = line.partition("\t")
            if not tab:
                raise FileFormatError(name, number, "expected a JSON object or id<TAB>text", line)
        if not ident:
            raise FileFormatError(name, number, "the id is empty", line)
        if ident in seen:
            raise FileFormatError(
                name, number, f"the id {ident!r} appears twice (first on line {seen[ident]})", line
            )
        seen[ident] = number
        pairs.append((ident, text))
    if not pairs:
        raise FileFormatError(name, None, f"{what} holds no texts")
    return pairs


def _run_table(ranking: Ranking) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "qid": pa.array(ranking.qid.tolist(), pa.string()),
            "docid": pa.array(ranking.docid.tolist(), pa.string()),
            "score": pa.array(ranking.score, pa.float64()),
            "rank": pa.array(ranking.rank, pa.int64()),
            "line": pa.nulls(len(ranking), pa.int64()),
        }
    )


def _qrels_table(qrels: Any, func: str) -> Any:
    import pyarrow as pa

    if isinstance(qrels, pa.Table):
        return qrels
    if not isinstance(qrels, Mapping):
        raise ParameterError(
            f"The 'qrels' parameter of {func} must be a judgements table or a mapping "
            f"{{qid: {{docid: grade}}}}. Got {type(qrels).__name__} instead."
        )
    rows = [(str(q), str(d), g) for q, docs in qrels.items() for d, g in dict(docs).items()]
    bad = [r for r in rows if isinstance(r[2], bool) or not isinstance(r[2], int | np.integer)]
    if bad:
        raise ParameterError(
            f"Every grade of the 'qrels' parameter of {func} must be an int. Got "
            f"{_show(bad[0][2])} for ({bad[0][0]!r}, {bad[0][1]!r}) instead."
        )
    return pa.table(
        {
            "qid": pa.array([r[0] for r in rows], pa.string()),
            "docid": pa.array([r[1] for r in rows], pa.string()),
            "rel": pa.array([int(r[2]) for r in rows], pa.int64()),
        }
    )


def noise_test(
    embed: Callable[[list[str]], Any],
    corpus: Mapping[str, str] | Sequence[tuple[str, str]],
    queries: Mapping[str, str] | Sequence[tuple[str, str]],
    qrels: Any,
    *,
    metric: str = "rr@10",
    k: int = 100,
    units: Any = None,
    seed: int = 0,
    seeds: int | str = "auto",
    batch_size: int | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> Any:
    """Check 2, live: the same retrieval with real vectors and with noise, scored and compared.

    Embeds the corpus and the queries once with ``embed``, ranks them by exact cosine, then
    replaces every vector (corpus and queries) with Gaussian noise of the same norms and ranks
    again with the same index. Both rankings are scored by the package's scorer and handed to
    :func:`evalvalidity.analysis.check.check_benchmark`, which returns the same result as the
    file-based check, with Check 2 filed under ``live``. Swapping ``embed`` is all a user
    changes.

    Parameters
    ----------
    embed : callable
        ``embed(texts: list[str]) -> array (len(texts), dim)``;
        :class:`~evalvalidity.core.embed.HashingEmbedder` runs
        offline out of the box.
    corpus, queries : mapping or sequence of (id, text)
        The corpus (documents, or chunks when ``units`` maps them to documents) and the queries.
    qrels : pyarrow.Table or mapping
        Judgements: a ``QRELS_SCHEMA`` table or ``{qid: {docid: grade}}``.
    metric : str
        Default ``rr@10``.
    k : int
        Items retrieved per query.
    units : pyarrow.Table or mapping, optional
        ``chunk_id → doc_id`` when the corpus is chunks and the judgements name documents.
    seed : int
        Seeds the noise and every random draw of the check.
    seeds : int or "auto"
        Seeds of Check 1's built-in simulation.
    batch_size : int, optional
        Passed to :func:`evalvalidity.core.embed.exact_cosine_topk`.
    progress : callable, optional
        Called with (fraction, message).

    Returns
    -------
    evalvalidity.analysis.results.CheckResult

    Examples
    --------
    >>> corpus = {f"d{i}": f"topic{i} words about subject{i}" for i in range(50)}
    >>> queries = {f"q{i}": f"subject{i} topic{i}" for i in range(10)}
    >>> qrels = {f"q{i}": {f"d{i}": 1} for i in range(10)}
    >>> from evalvalidity.core.embed import HashingEmbedder
    >>> result = noise_test(HashingEmbedder(), corpus, queries, qrels, seeds=4)
    >>> result.live.model, result.verdict
    (1.0, 'healthy')
    """
    import pyarrow as pa

    from evalvalidity.analysis.check import PoolSpec, check_tables

    func = "noise_test"
    _check_embed(embed, func)
    corpus_ids, corpus_texts = _texts_by_id(corpus, "corpus", func)
    query_ids, query_texts = _texts_by_id(queries, "queries", func)
    k = _int_at_least(k, 1, "k", func, show=_show)
    if batch_size is not None:
        batch_size = _int_at_least(batch_size, 1, "batch_size", func, show=_show)
    qrels_table = _qrels_table(qrels, func)
    if progress:
        progress(0.0, "Embedding the corpus and the queries")
    corpus_vectors, query_vectors = _embed_both(
        embed, corpus_ids, corpus_texts, query_ids, query_texts
    )
    real = _rank(query_ids, corpus_ids, query_vectors, corpus_vectors, k, batch_size, False)
    generator = np.random.default_rng([seed, 1])
    noise = _rank(
        query_ids,
        corpus_ids,
        _noise_like(query_vectors, generator),
        _noise_like(corpus_vectors, generator),
        k,
        batch_size,
        True,
    )
    if units is None:
        pool = PoolSpec(corpus_size=len(corpus_ids))
    elif isinstance(units, pa.Table):
        pool = PoolSpec(units=units)
    elif isinstance(units, Mapping):
        pool = PoolSpec(
            units=pa.table(
                {
                    "chunk_id": pa.array([str(c) for c in units], pa.string()),
                    "doc_id": pa.array([str(d) for d in units.values()], pa.string()),
                }
            )
        )
    else:
        raise ParameterError(
            f"The 'units' parameter of {func} must be a units table or a mapping chunk_id → "
            f"doc_id. Got {type(units).__name__} instead."
        )

    def relay(fraction: float, message: str) -> None:
        if progress:
            progress(0.3 + 0.7 * fraction, message)

    return check_tables(
        _run_table(real),
        qrels_table,
        pool=pool,
        metric=metric,
        noise_run=_run_table(noise),
        run_name="live",
        seeds=seeds,
        noise_source="live",
        seed=seed,
        progress=relay if progress else None,
    )
