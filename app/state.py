"""The dashboard's state and caches: the one module where they live.

Per session (``st.session_state``): the workspace handle, the session's owner id (uploads are
private to it until saved to the shared workspace), the current check configuration and the
previews of this session's uploads, keyed on each upload's ``file_id``.

Across sessions, two layers of cache, both keyed on content (each dataset's id and SHA-256, so
that a dataset replaced under the same name is never answered from the cache):

- the datasets' tables (``st.cache_resource``, :func:`dataset_table`): what a check loads and
  what does not depend on the metric, k or the tie policy, so changing one of those only reruns
  the check itself. A private dataset's entry is keyed on its owner as well and only that
  owner's session can name it; Arrow tables are immutable, so sharing one is safe;
- the check itself (``st.cache_data``): keyed by the plan's canonical JSON and the datasets'
  fingerprints, so that a plan computed before (a setting changed back) answers from the cache.
  A plan of shared datasets only is keyed without an owner: every session gets its result.

and the per-query rankings of the drill-down. Deleting a dataset drops the cached tables. The
library opens its own DuckDB connection per call, so no connection is shared.

Links (:func:`plan_link`, :func:`open_link`): a plan of shared datasets can be written as the
query parameters of the dashboard's address and opened from them.
"""

from __future__ import annotations

import re
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st

from evalvalidity.analysis import examples as demo
from evalvalidity.analysis.check import check_benchmark
from evalvalidity.analysis.consistency import check_consistency
from evalvalidity.analysis.plan import CheckInputs, CheckPlan, PoolSpec
from evalvalidity.analysis.results import CheckResult
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.core.types import Progress
from evalvalidity.errors import EvalValidityError, ParameterError
from evalvalidity.io.ingest import KINDS, read
from evalvalidity.io.workspace import DatasetInfo, Workspace, default_path
from evalvalidity.report import charts

#: The ways of declaring the pool, as the Health page offers them.
POOL_KINDS: dict[str, str] = {
    "corpus": "a corpus size (every query ranks the whole corpus)",
    "pools": "per-query pool sizes",
    "candidates": "per-query candidate lists",
    "units": "a units map (chunks deduplicated to documents)",
}

#: How many upload previews a session keeps.
_MAX_PREVIEWS = 16


# --------------------------------------------------------------------------- session


def workspace() -> Workspace:
    """This session's handle on the workspace ($EVALVALIDITY_WORKSPACE or the default)."""
    if "workspace" not in st.session_state:
        st.session_state["workspace"] = Workspace(default_path())
    ws: Workspace = st.session_state["workspace"]
    return ws


#: The owner token the browser keeps in its address (``?owner=``): 32 hex digits.
_TOKEN = re.compile(r"[0-9a-f]{32}")


def owner() -> str:
    """This browser's id: the owner of its private uploads, kept across reloads.

    The token lives in the page's address (``?owner=...``, set on the first visit and put back
    after every page change), so that a reload or a bookmark finds the same private uploads;
    anything else in that parameter is ignored and a new token made.
    """
    if "owner" not in st.session_state:
        token = st.query_params.get("owner")
        if not (isinstance(token, str) and _TOKEN.fullmatch(token)):
            token = uuid.uuid4().hex
        st.session_state["owner"] = f"session-{token}"
    value: str = st.session_state["owner"]
    token = value.removeprefix("session-")
    if st.query_params.get("owner") != token:
        st.query_params["owner"] = token
    return value


def datasets(kind: str | None = None) -> list[DatasetInfo]:
    """The datasets this session sees (shared ones and its own), optionally of one kind."""
    visible = workspace().list(owner())
    return [d for d in visible if kind is None or d.kind == kind]


def presets() -> list[demo.Preset]:
    """The recorded check configurations whose datasets this session sees."""
    try:
        recorded = demo.load_presets(workspace())
    except EvalValidityError:
        return []
    names = {d.name for d in datasets()}
    return [p for p in recorded if set(p.datasets()) <= names]


def config() -> demo.Preset | None:
    """The checked plan: the session's, else the first ready example (None after "New")."""
    current: demo.Preset | None = st.session_state.get("config")
    if current is not None:
        return current
    if st.session_state.get("config_cleared"):
        return None
    ready = presets()
    if ready:
        st.session_state["config"] = ready[0]
        return ready[0]
    return None


def set_config(new: demo.Preset) -> None:
    """Make ``new`` the session's check configuration."""
    st.session_state["config"] = new
    st.session_state.pop("config_cleared", None)


def clear_config() -> None:
    """Start a new benchmark: no plan until one is chosen and run."""
    st.session_state.pop("config", None)
    st.session_state["config_cleared"] = True


def replace_config(**changes: Any) -> demo.Preset | None:
    """Change some fields of the current configuration (None when there is none)."""
    current = config()
    if current is None:
        return None
    updated = current.with_changes(**changes)
    set_config(updated)
    return updated


def flash(message: str) -> None:
    """Keep a message to show once after the next rerun."""
    st.session_state["flash"] = message


def pop_flash() -> str | None:
    """The message kept by :func:`flash`, once."""
    message: str | None = st.session_state.pop("flash", None)
    return message


# --------------------------------------------------------------------------- uploads


@dataclass(frozen=True)
class Preview:
    """What reading an upload found, before anything lands in the workspace."""

    file_id: str
    source_name: str
    size_bytes: int
    kind: str | None
    format: str | None
    compression: str | None
    n_rows: int
    n_rejected: int
    rejected: tuple[tuple[int | None, str, str | None], ...]
    warnings: tuple[str, ...]
    line_unit: str
    error: str | None

    @property
    def ok(self) -> bool:
        """True when the file was read (possibly with rejected rows)."""
        return self.error is None


def preview(upload: Any, kind: str | None, progress: Progress | None = None) -> Preview:
    """Read an upload (dropping and listing bad rows) once per ``file_id`` and kind.

    The result is kept in the session: a rerun (any widget, a download) answers from it.
    """
    store: dict[tuple[str, str | None], Preview] = st.session_state.setdefault("previews", {})
    key = (str(upload.file_id), kind)
    if key in store:
        return store[key]
    if kind is not None and kind not in KINDS:
        raise ParameterError(f"Unknown dataset kind {kind!r}; expected one of {', '.join(KINDS)}.")
    data = upload.getvalue()
    try:
        found = read(
            data, kind=kind, display_name=upload.name, drop_bad_rows=True, progress=progress
        )
        result = Preview(
            file_id=key[0],
            source_name=upload.name,
            size_bytes=len(data),
            kind=found.kind,
            format=found.format,
            compression=found.compression,
            n_rows=found.n_rows,
            n_rejected=found.n_rejected,
            rejected=tuple((r.line, r.reason, r.raw) for r in found.rejected),
            warnings=found.warnings,
            line_unit=found.line_unit,
            error=None,
        )
    except EvalValidityError as exc:
        result = Preview(
            file_id=key[0],
            source_name=upload.name,
            size_bytes=len(data),
            kind=None,
            format=None,
            compression=None,
            n_rows=0,
            n_rejected=0,
            rejected=(),
            warnings=(),
            line_unit="line",
            error=str(exc),
        )
    while len(store) >= _MAX_PREVIEWS:
        store.pop(next(iter(store)))
    store[key] = result
    return result


def added(file_id: str) -> str | None:
    """The name of the dataset this session made from the upload ``file_id``, if any."""
    names: dict[str, str] = st.session_state.setdefault("added", {})
    return names.get(file_id)


def add_upload(
    upload: Any,
    *,
    kind: str,
    name: str | None,
    drop_bad_rows: bool,
    progress: Progress | None = None,
) -> DatasetInfo:
    """Store an upload as a dataset private to this session."""
    info = workspace().add(
        upload.getvalue(),
        kind=kind,
        name=name or None,
        drop_bad_rows=drop_bad_rows,
        display_name=upload.name,
        owner=owner(),
        progress=progress,
    )
    st.session_state.setdefault("added", {})[str(upload.file_id)] = info.name
    return info


def _visible(name: str) -> DatasetInfo:
    return workspace().info(name, owner=owner())


def rename(old: str, new: str) -> DatasetInfo:
    """Rename a dataset this session sees; the current configuration follows it."""
    _visible(old)
    info = workspace().rename(old, new, owner=owner())
    current = st.session_state.get("config")
    if current is not None:
        fields = {
            f: (new if getattr(current, f) == old else getattr(current, f))
            for f in ("run", "qrels", "noise_run", "harness")
        }
        if current.pool_kind != "corpus" and current.pool == old:
            fields["pool"] = new
        fields["compare"] = tuple(new if c == old else c for c in current.compare)
        st.session_state["config"] = current.with_changes(**fields)
    return info


def delete(name: str) -> None:
    """Delete a dataset this session sees."""
    _visible(name)
    workspace().delete(name, owner=owner())
    dataset_table.clear()  # keyed on content, so never stale; this frees the memory


def share(name: str) -> DatasetInfo:
    """Save one of this session's private datasets to the shared workspace."""
    info = _visible(name)
    if info.owner is None:
        return info
    return workspace().set_owner(name, None, owner=owner())


# ----------------------------------------------------------------------------- check


def _fingerprint(name: str | None) -> tuple[str, str, str] | None:
    if name is None:
        return None
    info = _visible(name)
    return (info.name, info.id, info.sha256)


def _table(
    ws: Workspace, fingerprint: tuple[str, str, str], kind: str, owner: str | None
) -> pa.Table:
    name, dataset_id, _ = fingerprint
    dataset = ws.get(name, owner=owner)
    if dataset.info.id != dataset_id:
        raise ParameterError(f"The dataset {name!r} changed while the check ran; run it again.")
    if dataset.info.kind != kind:
        raise ParameterError(
            f"The dataset {name!r} holds {dataset.info.kind} data, not {kind} data."
        )
    return dataset.table


#: How many datasets' tables the dashboard keeps in memory (all sessions together).
MAX_TABLES = 8
#: How many checks' results it keeps (all sessions together).
MAX_RESULTS = 64

#: A dataset as a check is keyed on it: (role, name, id, sha256, the dataset's owner).
Fingerprint = tuple[str, str, str, str, str | None]


@st.cache_resource(show_spinner="Loading the datasets…", max_entries=MAX_TABLES, ttl=3600)
def dataset_table(
    workspace_path: str, name: str, dataset_id: str, sha256: str, kind: str, owner: str | None
) -> pa.Table:
    """The table of one dataset, loaded once per content for every check that names it.

    ``owner`` is the dataset's owner (None for a shared dataset): a private dataset's table is
    cached under its owner, and only its owner's session resolves the name to that ``dataset_id``.
    The key holds the id and SHA-256, so a dataset replaced under the same name is loaded again.
    """
    return _load_table(Workspace(workspace_path), (name, dataset_id, sha256), kind, owner)


def _load_table(
    ws: Workspace, fingerprint: tuple[str, str, str], kind: str, owner: str | None
) -> pa.Table:
    return _table(ws, fingerprint, kind, owner)


def _inputs(
    workspace_path: str, plan: CheckPlan, fingerprints: tuple[Fingerprint, ...]
) -> CheckInputs:
    """The tables of a plan, from :func:`dataset_table`, by the fingerprints it was keyed on."""
    kinds = {"run": "run", "qrels": "qrels", "noise_run": "run", "harness_output": "harness"}
    tables: dict[str, pa.Table] = {}
    compare: dict[str, pa.Table] = {}
    pool_table = None
    for role, name, dataset_id, sha, dataset_owner in fingerprints:
        if role == "pool":
            kind: str = plan.pool.kind
        elif role.startswith("compare:"):
            kind = "run"
        else:
            kind = kinds[role]
        table = dataset_table(workspace_path, name, dataset_id, sha, kind, dataset_owner)
        if role == "pool":
            pool_table = table
        elif role.startswith("compare:"):
            compare[role.split(":", 1)[1]] = table
        else:
            tables[role] = table
    declared = plan.pool
    if declared.kind == "corpus":
        spec = PoolSpec(corpus_size=declared.corpus_size)
    elif declared.kind == "pools":
        spec = PoolSpec(pools=pool_table)
    elif declared.kind == "candidates":
        spec = PoolSpec(candidates=pool_table)
    else:
        spec = PoolSpec(units=pool_table, analytic_unit=declared.analytic_unit)
    return CheckInputs(pool=spec, compare=compare, **tables)


@st.cache_data(
    show_spinner="Running the checks: floors, Check 1, Check 2, inferred N…",
    max_entries=MAX_RESULTS,
)
def _check(
    workspace_path: str,
    plan_json: str,
    fingerprints: tuple[Fingerprint, ...],
    owner: str | None = None,
) -> CheckResult:
    """The check of a plan; ``fingerprints`` key the cache on content; ``owner`` is the
    session's owner when the plan names a private dataset (None otherwise)."""
    plan = CheckPlan.from_json(plan_json)
    return check_benchmark(plan, _inputs(workspace_path, plan, fingerprints))


def _fingerprints(cfg: demo.Preset) -> tuple[Fingerprint, ...]:
    fingerprints = []
    for role, ref in cfg.plan.refs.items():
        info = _visible(ref.name)
        fingerprints.append((role, info.name, info.id, info.sha256, info.owner))
    return tuple(fingerprints)


def _check_key(cfg: demo.Preset) -> tuple[str, str, tuple[Fingerprint, ...], str | None]:
    """What the check of ``cfg`` is cached under: workspace, plan, datasets' content, owner.

    The session's owner is part of the key only when the plan names a private dataset: a plan
    of shared datasets answers every session from one cached result.
    """
    fingerprints = _fingerprints(cfg)
    private = any(f[4] is not None for f in fingerprints)
    return (
        str(workspace().path),
        cfg.plan.to_json(indent=None),
        fingerprints,
        owner() if private else None,
    )


@st.cache_data(show_spinner=False, max_entries=64)
def _consistency(
    workspace_path: str,
    plan_json: str,
    fingerprints: tuple[Fingerprint, ...],
    owner: str | None = None,
) -> tuple[str | None, tuple[str, ...]]:
    plan = CheckPlan.from_json(plan_json)
    try:
        inputs = _inputs(workspace_path, plan, fingerprints)
        found = check_consistency(plan, inputs)
    except EvalValidityError as exc:
        return str(exc), ()
    return None, tuple(f.message for f in found)


def consistency(cfg: demo.Preset) -> tuple[str | None, tuple[str, ...]]:
    """Do a plan's datasets belong together? Asked of a draft before it is checked.

    The library's :func:`~evalvalidity.analysis.consistency.check_consistency` on the plan's
    tables: the message of the first pair that shares no query or id (the check would refuse
    the plan) or None, and the warnings about pairs that only partly overlap.
    """
    try:
        key = _check_key(cfg)
    except EvalValidityError as exc:
        return str(exc), ()
    return _consistency(*key)


@st.cache_data(show_spinner=False, max_entries=256)
def _qids(workspace_path: str, run: tuple[str, str, str], owner: str | None = None) -> pa.Array:
    table = _table(Workspace(workspace_path), run, "run", owner)
    column = table.column("qid")
    flat = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    unique: pa.Array = pc.unique(flat)
    return unique


def shares_a_query(run: str, other: str) -> bool:
    """True when the runs ``run`` and ``other`` rank at least one query in common."""
    a, b = _fingerprint(run), _fingerprint(other)
    assert a is not None and b is not None
    path = str(workspace().path)
    mine, theirs = _qids(path, a, owner()), _qids(path, b, owner())
    return bool(len(mine) and len(theirs) and pc.any(pc.is_in(theirs, value_set=mine)).as_py())


def run_check(cfg: demo.Preset) -> CheckResult:
    """The check of a configuration's plan, from the cache when it ran before.

    Raises
    ------
    EvalValidityError
        What the library raises on bad input, for the page to show.
    """
    return _check(*_check_key(cfg))


#: How many checks' charts a session keeps.
_MAX_CHARTS = 4


def result_charts(cfg: demo.Preset, result: CheckResult) -> dict[str, Any]:
    """The charts of ``cfg``'s check (``result``), built once per check in this session.

    Every rerun of the Health page (any widget) would otherwise build them again: the most
    expensive part of the page once the check itself comes from the cache.
    """
    store: dict[Any, dict[str, Any]] = st.session_state.setdefault("charts", {})
    key = _check_key(cfg)
    if key not in store:
        while len(store) >= _MAX_CHARTS:
            store.pop(next(iter(store)))
        store[key] = charts.result_charts(result)
    return store[key]


def current_result() -> tuple[demo.Preset | None, CheckResult | None, str | None]:
    """The current configuration, its check (None when it cannot run) and the error, if any."""
    cfg = config()
    if cfg is None:
        return None, None, None
    try:
        return cfg, run_check(cfg), None
    except EvalValidityError as exc:
        return cfg, None, str(exc)


# -------------------------------------------------------------------------- drill-down


@st.cache_data(show_spinner="Ranking the query…", max_entries=256)
def _ranking(
    workspace_path: str,
    run: tuple[str, str, str],
    qrels: tuple[str, str, str],
    units: tuple[str, str, str] | None,
    qid: str,
    ties: str,
    depth: int,
    owner: str | None = None,
) -> pd.DataFrame:
    from evalvalidity.io.scoring import rank_run

    ws = Workspace(workspace_path)
    table = _table(ws, run, "run", owner)
    one = table.filter(pc.equal(table.column("qid"), qid))
    if one.num_rows == 0:
        return pd.DataFrame(columns=["position", "docid", "score", "grade"])
    units_table = _table(ws, units, "units", owner) if units is not None else None
    if units_table is not None:
        chunks = pc.is_in(units_table.column("chunk_id"), value_set=one.column("docid"))
        units_table = units_table.filter(chunks)
    ranked = rank_run(one, units=units_table, ties=ties).to_pandas()
    judged = _table(ws, qrels, "qrels", owner)
    judged = judged.filter(pc.equal(judged.column("qid"), qid)).to_pandas()
    grades = dict(zip(judged["docid"].astype(str), judged["rel"].astype(int), strict=False))
    ranked["grade"] = [grades.get(str(d)) for d in ranked["docid"]]
    head: pd.DataFrame = ranked.head(depth)
    return head


def ranking(cfg: demo.Preset, qid: str, depth: int = 50) -> pd.DataFrame:
    """The top of one query's ranking in the model's run, with each item's judged grade."""
    run = _fingerprint(cfg.run)
    qrels = _fingerprint(cfg.qrels)
    if run is None or qrels is None:
        raise ParameterError("The configuration has no run to rank.")
    units = _fingerprint(str(cfg.pool)) if cfg.pool_kind == "units" else None
    return _ranking(str(workspace().path), run, qrels, units, str(qid), cfg.ties, depth, owner())


@st.cache_data(show_spinner=False, max_entries=256)
def _pool_items(
    workspace_path: str,
    pool: tuple[str, str, str],
    pool_kind: str,
    qrels: tuple[str, str, str],
    qid: str,
    owner: str | None = None,
) -> pd.DataFrame:
    ws = Workspace(workspace_path)
    judged = _table(ws, qrels, "qrels", owner)
    judged = judged.filter(pc.equal(judged.column("qid"), qid)).to_pandas()
    grades = dict(zip(judged["docid"].astype(str), judged["rel"].astype(int), strict=False))
    if pool_kind == "candidates":
        table = _table(ws, pool, "candidates", owner)
        items = table.filter(pc.equal(table.column("qid"), qid)).column("docid").to_pylist()
        return pd.DataFrame({"item": items, "grade": [grades.get(str(i)) for i in items]})
    table = _table(ws, pool, "units", owner)
    gold = [d for d, g in grades.items() if g > 0]
    mask = pc.is_in(table.column("doc_id"), value_set=pa.array(gold, pa.string()))
    chunks = table.filter(mask).to_pandas()
    counts = chunks.groupby("doc_id").size()
    return pd.DataFrame(
        {
            "item": [str(d) for d in gold],
            "grade": [grades[d] for d in gold],
            "chunks": [int(counts.get(d, 0)) for d in gold],
        }
    )


def pool_items(cfg: demo.Preset, qid: str) -> pd.DataFrame | None:
    """One query's pool spelled out: its candidates, or its gold documents' chunk counts."""
    if cfg.pool_kind not in ("candidates", "units"):
        return None
    pool = _fingerprint(str(cfg.pool))
    qrels = _fingerprint(cfg.qrels)
    if pool is None or qrels is None:
        raise ParameterError("The configuration has no pool dataset or no judgements.")
    return _pool_items(str(workspace().path), pool, cfg.pool_kind, qrels, str(qid), owner())


@st.cache_data(show_spinner=False, max_entries=256)
def _judged_grades(
    workspace_path: str, qrels: tuple[str, str, str], qid: str, owner: str | None = None
) -> tuple[int, ...]:
    judged = _table(Workspace(workspace_path), qrels, "qrels", owner)
    grades = judged.filter(pc.equal(judged.column("qid"), qid)).column("rel").to_pylist()
    return tuple(sorted((int(g) for g in grades if g is not None and g > 0), reverse=True))


def judged_grades(cfg: demo.Preset, qid: str) -> tuple[int, ...]:
    """The grades (> 0) of every item judged relevant for one query, best first."""
    qrels = _fingerprint(cfg.qrels)
    if qrels is None:
        raise ParameterError("The configuration has no judgements.")
    return _judged_grades(str(workspace().path), qrels, str(qid), owner())


# ------------------------------------------------------------------------------- links

#: The query parameters of a plan's link, in the order a link writes them.
LINK_PARAMS = (
    "run",
    "qrels",
    "noise",
    "harness",
    "compare",
    "pool_kind",
    "pool",
    "unit",
    "metric",
    "k",
    "rel",
    "ties",
    "seeds",
)

#: The tie policies a link may name.
_TIES = ("trec_eval", "given", "average")


@dataclass(frozen=True)
class Link:
    """A plan written as a link, or why it cannot be.

    Attributes
    ----------
    url : str or None
        The link (None when the plan names a private dataset).
    private : tuple of str
        The private datasets the plan names: a link never names one.
    """

    url: str | None
    private: tuple[str, ...]


def link_query(cfg: demo.Preset) -> list[tuple[str, str]]:
    """The query parameters naming ``cfg``'s datasets and settings (see :data:`LINK_PARAMS`).

    The metric is written as its family, cutoff and relevance threshold
    (``metric=rr&k=10``, ``rel`` only when it is not 1); ``seeds`` only when it is not
    ``auto``. The owner token is never part of a link.
    """
    metric = parse_metric(cfg.metric)
    pairs: list[tuple[str, str]] = []
    if cfg.run is not None:
        pairs.append(("run", cfg.run))
    pairs.append(("qrels", cfg.qrels))
    if cfg.noise_run is not None:
        pairs.append(("noise", cfg.noise_run))
    if cfg.harness is not None:
        pairs.append(("harness", cfg.harness))
    pairs.extend(("compare", name) for name in cfg.compare)
    pairs.append(("pool_kind", cfg.pool_kind))
    pairs.append(("pool", str(cfg.pool)))
    if cfg.pool_kind == "units":
        pairs.append(("unit", cfg.analytic_unit))
    pairs.append(("metric", metric.family))
    if metric.k is not None:
        pairs.append(("k", str(metric.k)))
    if metric.rel != 1:
        pairs.append(("rel", str(metric.rel)))
    pairs.append(("ties", cfg.ties))
    if cfg.seeds != "auto":
        pairs.append(("seeds", str(cfg.seeds)))
    return pairs


def plan_link(cfg: demo.Preset, base_url: str | None = None) -> Link:
    """The link that opens ``cfg`` in the dashboard, unless it names a private dataset.

    ``base_url`` is the dashboard's address (default: the page's, ``st.context.url``); its
    query and fragment are dropped, so the owner token never travels in a link.
    """
    private = tuple(
        sorted({ref.name for ref in cfg.plan.refs.values() if _visible(ref.name).owner})
    )
    if private:
        return Link(None, private)
    if base_url is None:
        base_url = st.context.url or ""
    parts = urllib.parse.urlsplit(base_url)
    query = urllib.parse.urlencode(link_query(cfg))
    return Link(urllib.parse.urlunsplit((*parts[:3], query, "")), ())


def _one(params: dict[str, list[str]], key: str) -> str | None:
    values = params.get(key, [])
    if len(values) > 1:
        raise ParameterError(f"The link names {key!r} {len(values)} times; it may name it once.")
    return values[0] if values else None


def _int_param(params: dict[str, list[str]], key: str, default: int | None) -> int | None:
    text = _one(params, key)
    if text is None:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ParameterError(f"The link's {key!r} must be an integer >= 1. Got {text!r} instead.")
    return int(text)


def plan_of_link(params: dict[str, list[str]]) -> demo.Preset:
    """The configuration a link's query parameters name, checked against this session's view.

    Parameters
    ----------
    params : dict of str to list of str
        The link's parameters (each with every value it was given); other keys are ignored.

    Raises
    ------
    ParameterError
        When a parameter is malformed, or a dataset the link names is not a shared dataset of
        this workspace (or this session's own dataset of the same name hides it).
    """
    qrels = _one(params, "qrels")
    if qrels is None:
        raise ParameterError("The link names no judgements: it needs a 'qrels' parameter.")
    pool_kind = _one(params, "pool_kind") or "corpus"
    if pool_kind not in POOL_KINDS:
        raise ParameterError(
            f"The link's 'pool_kind' must be one of {', '.join(POOL_KINDS)}. Got {pool_kind!r}."
        )
    pool: str | int
    if pool_kind == "corpus":
        size = _int_param(params, "pool", None)
        if size is None:
            raise ParameterError("The link declares a corpus pool without its size ('pool').")
        pool = size
    else:
        named = _one(params, "pool")
        if not named:
            raise ParameterError(f"The link declares {pool_kind} without naming the dataset.")
        pool = named
    # A family (``rr``) or any spelling the library reads (``rr@10``, ``P_10``); k and rel win.
    spelled = parse_metric(_one(params, "metric") or "rr")
    rel = _int_param(params, "rel", spelled.rel)
    assert rel is not None
    metric = Metric(spelled.family, _int_param(params, "k", spelled.k), rel).name
    ties = _one(params, "ties") or "trec_eval"
    if ties not in _TIES:
        raise ParameterError(
            f"The link's 'ties' must be one of {', '.join(_TIES)}. Got {ties!r} instead."
        )
    seeds: int | str = "auto"
    if _one(params, "seeds") not in (None, "auto"):
        seeds = _int_param(params, "seeds", 1) or 1
    fields: dict[str, Any] = {
        "run": _one(params, "run"),
        "qrels": qrels,
        "noise_run": _one(params, "noise"),
        "harness": _one(params, "harness"),
        "compare": tuple(params.get("compare", [])),
        "pool_kind": pool_kind,
        "pool": pool,
        "analytic_unit": _one(params, "unit") or "documents",
        "metric": metric,
        "ties": ties,
        "seeds": seeds,
    }
    cfg = demo.Preset("link", "A shared plan", "Opened from a link.", **fields)
    ws, me = workspace(), owner()
    missing, hidden = [], []
    for name in dict.fromkeys(cfg.datasets()):
        if ws.find(name) is None:
            missing.append(name)
        elif ws.find(name, owner=me) != ws.find(name):
            hidden.append(name)
    if missing:
        raise ParameterError(
            "The link names datasets this workspace does not share: "
            f"{', '.join(map(repr, missing))}. Ask whoever sent it to save them to the shared "
            "workspace (Workspace page, Share), or check the link's spelling."
        )
    if hidden:
        raise ParameterError(
            f"The link names the shared datasets {', '.join(map(repr, hidden))}, but datasets "
            "of yours with the same names hide them; rename yours on the Workspace page to "
            "open this link."
        )
    same = next((p for p in presets() if p.fields() == cfg.fields()), None)
    return same if same is not None else cfg


def open_link() -> None:
    """Check the plan named in the address, if any, and take its parameters out of it.

    A link names shared datasets only; when each of them exists the plan becomes the session's
    checked configuration (its verdict computed at once, from the cache when it ran before);
    otherwise nothing changes and :func:`link_message` says why.
    """
    keys = [k for k in st.query_params if k in LINK_PARAMS]
    if not keys:
        return
    params = {k: st.query_params.get_all(k) for k in keys}
    for k in keys:
        del st.query_params[k]
    try:
        cfg = plan_of_link(params)
    except EvalValidityError as exc:
        st.session_state["link_message"] = ("error", f"The link cannot be opened: {exc}")
        return
    set_config(cfg)
    st.session_state.pop("draft", None)  # the Health page shows the linked plan
    st.session_state["link_message"] = ("info", "Opened the plan from the link.")


def link_message() -> tuple[str, str] | None:
    """What opening a link did (kind ``info`` or ``error``, text), once."""
    message: tuple[str, str] | None = st.session_state.pop("link_message", None)
    return message
