"""The dashboard's state and caches: the one module where they live.

Per session (``st.session_state``): the workspace handle, the session's owner id (uploads are
private to it until saved to the shared workspace), the current check configuration and the
previews of this session's uploads, keyed on each upload's ``file_id``.

Across sessions (``st.cache_data``): the check itself, keyed by the datasets' names, ids and
content hashes and by every parameter, so that changing the metric or k and changing it back
answers from the cache; and the per-query rankings of the drill-down. Nothing here is a
``cache_resource``, so no mutable value is shared between sessions; the library opens its own
DuckDB connection per call, so no connection is shared either.
"""

from __future__ import annotations

import re
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
from evalvalidity.core.types import Progress
from evalvalidity.errors import EvalValidityError, ParameterError
from evalvalidity.io.ingest import KINDS, read
from evalvalidity.io.workspace import DatasetInfo, Workspace, default_path

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


def _inputs(
    ws: Workspace,
    plan: CheckPlan,
    fingerprints: tuple[tuple[str, str, str, str], ...],
    owner: str | None,
) -> CheckInputs:
    """The tables of a plan, read by the fingerprints (role, name, id, sha256) it was keyed on."""
    kinds = {"run": "run", "qrels": "qrels", "noise_run": "run", "harness_output": "harness"}
    tables: dict[str, pa.Table] = {}
    compare: dict[str, pa.Table] = {}
    pool_table = None
    for role, name, dataset_id, sha in fingerprints:
        if role == "pool":
            pool_table = _table(ws, (name, dataset_id, sha), plan.pool.kind, owner)
        elif role.startswith("compare:"):
            compare[role.split(":", 1)[1]] = _table(ws, (name, dataset_id, sha), "run", owner)
        else:
            tables[role] = _table(ws, (name, dataset_id, sha), kinds[role], owner)
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
    show_spinner="Running the checks: floors, Check 1, Check 2, inferred N…", max_entries=64
)
def _check(
    workspace_path: str,
    plan_json: str,
    fingerprints: tuple[tuple[str, str, str, str], ...],
    owner: str | None = None,
) -> CheckResult:
    """The check of a plan; ``fingerprints`` (role, name, id, sha256) key the cache on content."""
    plan = CheckPlan.from_json(plan_json)
    return check_benchmark(plan, _inputs(Workspace(workspace_path), plan, fingerprints, owner))


def _fingerprints(cfg: demo.Preset) -> tuple[tuple[str, str, str, str], ...]:
    fingerprints = []
    for role, ref in cfg.plan.refs.items():
        found = _fingerprint(ref.name)
        assert found is not None
        fingerprints.append((role, *found))
    return tuple(fingerprints)


@st.cache_data(show_spinner=False, max_entries=64)
def _consistency(
    workspace_path: str,
    plan_json: str,
    fingerprints: tuple[tuple[str, str, str, str], ...],
    owner: str | None = None,
) -> tuple[str | None, tuple[str, ...]]:
    plan = CheckPlan.from_json(plan_json)
    try:
        inputs = _inputs(Workspace(workspace_path), plan, fingerprints, owner)
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
        fingerprints = _fingerprints(cfg)
    except EvalValidityError as exc:
        return str(exc), ()
    return _consistency(str(workspace().path), cfg.plan.to_json(indent=None), fingerprints, owner())


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
    return _check(str(workspace().path), cfg.plan.to_json(indent=None), _fingerprints(cfg), owner())


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
