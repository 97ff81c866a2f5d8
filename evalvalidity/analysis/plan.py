"""What a check uses, named in one frozen value: :class:`CheckPlan`, and the tables it loads.

A :class:`CheckPlan` names every input of a benchmark check (the run, the runs to compare, the
judgements, the pool declaration, the noise run, the harness's output) as :class:`DatasetRef`
values, and every parameter (metric, tie policy, seeds, random seed, thresholds). It is plain
data: :meth:`CheckPlan.to_json` and :meth:`CheckPlan.from_json` round-trip it exactly, so a
saved plan reruns the same check. :class:`CheckInputs` holds the loaded tables, with the pool as
a :class:`PoolSpec`.

Examples
--------
>>> plan = CheckPlan(
...     run=DatasetRef.file("model.trec"),
...     qrels=DatasetRef.dataset("toy.qrels"),
...     pool=PoolDeclaration(corpus_size=200),
...     seeds=20,
... )
>>> CheckPlan.from_json(plan.to_json()) == plan
True
>>> plan.to_dict()["pool"]
{'corpus_size': 200, 'pools': None, 'candidates': None, 'units': None, 'analytic_unit': 'documents'}
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import pyarrow as pa

from evalvalidity.core.types import (
    AnalyticUnit,
    NoiseSource,
    PoolKind,
    Severity,
    TiePolicy,
    Verdict,
)
from evalvalidity.errors import ParameterError

__all__ = [
    "PLAN_SCHEMA_VERSION",
    "AnalyticUnit",
    "CheckInputs",
    "CheckPlan",
    "DatasetRef",
    "NoiseSource",
    "PoolDeclaration",
    "PoolKind",
    "PoolSpec",
    "RefSource",
    "Severity",
    "Thresholds",
    "TiePolicy",
    "Verdict",
]

#: Version of :meth:`CheckPlan.to_dict`'s layout; bumped on any incompatible change.
PLAN_SCHEMA_VERSION = 1

#: Where a dataset of a plan comes from: a file path, a workspace dataset, or an in-memory table.
RefSource = Literal["file", "dataset", "table"]

_POOL_FIELDS = ("corpus_size", "pools", "candidates", "units")
_POOL_KINDS = {
    "corpus_size": "corpus",
    "pools": "pools",
    "candidates": "candidates",
    "units": "units",
}


def _one_pool(owner: Any) -> str:
    """The pool kind ``owner`` declares, after checking it declares exactly one."""
    given = [name for name in _POOL_FIELDS if getattr(owner, name) is not None]
    if len(given) != 1:
        raise ParameterError(
            "Declare the pool in exactly one way: a corpus size, per-query pool sizes, "
            "per-query candidate lists or a units map. Got "
            + (", ".join(given) if given else "none")
            + "."
        )
    size = owner.corpus_size
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ParameterError(f"The corpus size must be an int >= 1. Got {size!r} instead.")
    if owner.analytic_unit not in get_args(AnalyticUnit):
        raise ParameterError(
            f"The 'analytic_unit' parameter of {type(owner).__name__} must be 'documents' or "
            f"'chunks'. Got {owner.analytic_unit!r} instead."
        )
    if owner.analytic_unit == "chunks" and owner.units is None:
        raise ParameterError("analytic_unit='chunks' needs a units map.")
    return _POOL_KINDS[given[0]]


@dataclass(frozen=True)
class PoolSpec:
    """What each query's ranking was drawn from, as loaded tables: give exactly one way.

    Attributes
    ----------
    corpus_size : int, optional
        Every query ranks the whole corpus of this many items (in the run's unit).
    pools : pyarrow.Table, optional
        Per-query pool sizes (``POOLS_SCHEMA``).
    candidates : pyarrow.Table, optional
        Per-query candidate lists (``CANDIDATES_SCHEMA``).
    units : pyarrow.Table, optional
        A units map (``UNITS_SCHEMA``): the run ranks chunks of the whole map, which the scorer
        deduplicates to documents by first occurrence.
    analytic_unit : {"documents", "chunks"}
        With a units map: ``"documents"`` (default) computes the exact floor of deduplicated
        random chunk scores; ``"chunks"`` computes it as if the scorer ranked chunks without
        deduplication — the analytic a harness with the units bug compares with.

    Examples
    --------
    >>> PoolSpec(corpus_size=218).kind
    'corpus'
    """

    corpus_size: int | None = None
    pools: pa.Table | None = None
    candidates: pa.Table | None = None
    units: pa.Table | None = None
    analytic_unit: AnalyticUnit = "documents"

    def __post_init__(self) -> None:
        _one_pool(self)

    @property
    def kind(self) -> PoolKind:
        """``corpus``, ``pools``, ``candidates`` or ``units``."""
        kind: PoolKind = _one_pool(self)  # type: ignore[assignment]
        return kind


@dataclass(frozen=True)
class Thresholds:
    """Where the verdict draws its lines; every rule is stated in the reasons it produces.

    Attributes
    ----------
    floor_share_broken : float
        Mean floor / mean ceiling at or above this: no headroom, ``broken`` (a pool of 8 with
        5 gold: 0.79).
    floor_share_warning : float
        ... at or above this: ``warning``.
    ratio_band : tuple of float
        Check 1 or the noise run: a ratio to the floor whose 95 % interval excludes 1 is a
        ``warning`` inside this band and ``broken`` outside it.
    leak_z : float
        A noise run this many standard errors (of the exact floor distribution) above its
        floor, and outside ``ratio_band``: something other than the vectors carries the score.
    noise_z : float
        A noise run this many standard errors above its floor, with an interval above 1, is
        flagged ``noise_above_floor`` (overall and per query).
    min_headroom_se : float
        Fewer standard errors of the model's mean than this fit in the headroom: ``warning``
        (only gross differences are detectable).
    query_floor_share : float
        Per query: floor / ceiling at or above this is flagged ``floor_high``.
    delta : float
        The difference between two systems the power analysis plans for.
    precision : float
        Target relative standard error of Check 1's ratio when choosing seeds.
    """

    floor_share_broken: float = 0.5
    floor_share_warning: float = 0.25
    ratio_band: tuple[float, float] = (0.8, 1.25)
    leak_z: float = 4.0
    noise_z: float = 3.0
    min_headroom_se: float = 4.0
    query_floor_share: float = 0.5
    delta: float = 0.05
    precision: float = 0.02

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            values = value if f.name == "ratio_band" else (value,)
            if f.name == "ratio_band" and (not isinstance(value, tuple) or len(value) != 2):
                raise ParameterError(
                    f"The 'ratio_band' threshold must be a pair (low, high). Got {value!r} instead."
                )
            for v in values:
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise ParameterError(
                        f"The {f.name!r} threshold must be a number. Got {v!r} instead."
                    )


@dataclass(frozen=True)
class DatasetRef:
    """One input of a plan: a file, a workspace dataset, or a table passed in memory.

    Attributes
    ----------
    source : {"file", "dataset", "table"}
        Where the table comes from; a ``table`` reference only labels a table handed to
        :func:`~evalvalidity.analysis.check.check_benchmark` in its ``inputs``.
    name : str
        The file path, the dataset name or the label.
    sha256 : str, optional
        The content's SHA-256 (hex): loading refuses a file or dataset whose content differs.

    Examples
    --------
    >>> DatasetRef.file("runs/model.trec")
    DatasetRef(source='file', name='runs/model.trec', sha256=None)
    """

    source: RefSource
    name: str
    sha256: str | None = None

    def __post_init__(self) -> None:
        if self.source not in get_args(RefSource):
            raise ParameterError(
                "The 'source' of a DatasetRef must be 'file', 'dataset' or 'table'. "
                f"Got {self.source!r} instead."
            )
        if not isinstance(self.name, str) or not self.name:
            raise ParameterError(
                f"The 'name' of a DatasetRef must be a non-empty str. Got {self.name!r} instead."
            )
        if self.sha256 is not None and (
            not isinstance(self.sha256, str)
            or len(self.sha256) != 64
            or any(c not in "0123456789abcdef" for c in self.sha256)
        ):
            raise ParameterError(
                "The 'sha256' of a DatasetRef must be 64 lower-case hex digits. "
                f"Got {self.sha256!r} instead."
            )

    @classmethod
    def file(cls, path: str, sha256: str | None = None) -> DatasetRef:
        """A file path."""
        return cls("file", str(path), sha256)

    @classmethod
    def dataset(cls, name: str, sha256: str | None = None) -> DatasetRef:
        """A dataset of the workspace."""
        return cls("dataset", name, sha256)

    @classmethod
    def table(cls, label: str) -> DatasetRef:
        """A table handed over in memory, under ``label``."""
        return cls("table", label)

    def to_dict(self) -> dict[str, Any]:
        """``{"source": ..., "name": ..., "sha256": ...}``."""
        return {"source": self.source, "name": self.name, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, record: Any, where: str = "a dataset reference") -> DatasetRef:
        """Inverse of :meth:`to_dict`; refuses unknown and missing keys."""
        values = _fields_of(cls, record, where, required=("source", "name"))
        return cls(**values)


@dataclass(frozen=True)
class PoolDeclaration:
    """The pool as a plan declares it: a corpus size, or the dataset that sizes it.

    Attributes
    ----------
    corpus_size : int, optional
        Every query ranks the whole corpus of this many items.
    pools, candidates, units : DatasetRef, optional
        Per-query pool sizes, per-query candidate lists or a units map.
    analytic_unit : {"documents", "chunks"}
        As in :class:`PoolSpec`.
    """

    corpus_size: int | None = None
    pools: DatasetRef | None = None
    candidates: DatasetRef | None = None
    units: DatasetRef | None = None
    analytic_unit: AnalyticUnit = "documents"

    def __post_init__(self) -> None:
        _one_pool(self)

    @property
    def kind(self) -> PoolKind:
        """``corpus``, ``pools``, ``candidates`` or ``units``."""
        kind: PoolKind = _one_pool(self)  # type: ignore[assignment]
        return kind

    @property
    def ref(self) -> DatasetRef | None:
        """The dataset that declares the pool (None for a corpus size)."""
        ref: DatasetRef | None = self.pools or self.candidates or self.units
        return ref

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "corpus_size": self.corpus_size,
            "pools": _ref_dict(self.pools),
            "candidates": _ref_dict(self.candidates),
            "units": _ref_dict(self.units),
            "analytic_unit": self.analytic_unit,
        }

    @classmethod
    def from_dict(cls, record: Any) -> PoolDeclaration:
        """Inverse of :meth:`to_dict`."""
        values = _fields_of(cls, record, "the pool declaration")
        for name in ("pools", "candidates", "units"):
            if values.get(name) is not None:
                values[name] = DatasetRef.from_dict(values[name], f"the pool's {name!r}")
        return cls(**values)


def _ref_dict(ref: DatasetRef | None) -> dict[str, Any] | None:
    return ref.to_dict() if ref is not None else None


def _fields_of(cls: Any, record: Any, where: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keys of ``record`` after refusing a non-object, unknown keys and missing ones."""
    if not isinstance(record, Mapping):
        raise ParameterError(f"{where[0].upper()}{where[1:]} must be an object. Got {record!r}.")
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(str(k) for k in record if k not in known)
    if unknown:
        raise ParameterError(
            f"Unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in "
            f"{where}; expected some of {', '.join(known)}."
        )
    missing = [k for k in required if k not in record]
    if missing:
        raise ParameterError(
            f"{where[0].upper()}{where[1:]} lacks {', '.join(map(repr, missing))}."
        )
    return dict(record)


@dataclass(frozen=True, kw_only=True)
class CheckPlan:
    """Everything a benchmark check uses, by reference: rerunning a plan reruns the check.

    Attributes
    ----------
    qrels : DatasetRef
        The judgements.
    pool : PoolDeclaration
        The declared pool.
    run : DatasetRef, optional
        The model's ranking; None checks the benchmark alone.
    run_name : str
        The name the run is shown under.
    compare : tuple of (str, DatasetRef)
        More runs to compare with ``run``, by name (paired randomization tests, Holm).
    noise_run : DatasetRef, optional
        The same pipeline with every vector replaced by noise (Check 2).
    noise_source : {"noise-run", "live"}
        Where Check 2's result is filed (``live``: made by
        :func:`evalvalidity.analysis.live.noise_test`).
    noise_components_off : tuple of str, optional
        What the noise run's pipeline had switched off (e.g. ``("bm25", "reranker")``).
    harness_output : DatasetRef, optional
        The team's harness's per-query values on noise runs: Check 1 runs on it instead of the
        built-in simulation.
    harness_depth : int, optional
        Items per query of the random runs the harness scored (their manifest's ``depth``);
        None: random-runs' default, 1,000. Check 1 compares with the floor at that depth.
    harness_seeds : int, optional
        How many random runs the harness scored (the manifest's ``seeds``); None: as many as
        the output shows.
    metric : str
        Default ``rr@10`` (MRR@10).
    ties : {"trec_eval", "given", "average"}
        The scorer's tie policy.
    seeds : int or "auto"
        Seeds of the built-in Check 1; "auto" picks them for ``thresholds.precision``.
    seed : int
        Seed of every random draw: the same inputs and seed give the same result.
    thresholds : Thresholds
        Where the verdict draws its lines.
    units_rule : str, optional
        ``prefix:SEP``: the run's ids are ``document SEP segment`` and the judgements judge the
        document (e.g. ``prefix:#``), so no units file is needed.
    query_texts, corpus_texts : DatasetRef, optional
        ``id, text`` files of the queries and the corpus: (near-)identical texts count as
        self-hits.
    """

    qrels: DatasetRef
    pool: PoolDeclaration
    run: DatasetRef | None = None
    run_name: str = "run"
    compare: tuple[tuple[str, DatasetRef], ...] = ()
    noise_run: DatasetRef | None = None
    noise_source: NoiseSource = "noise-run"
    noise_components_off: tuple[str, ...] | None = None
    harness_output: DatasetRef | None = None
    harness_depth: int | None = None
    harness_seeds: int | None = None
    metric: str = "rr@10"
    ties: TiePolicy = "trec_eval"
    seeds: int | Literal["auto"] = "auto"
    seed: int = 0
    thresholds: Thresholds = field(default_factory=Thresholds)
    units_rule: str | None = None
    query_texts: DatasetRef | None = None
    corpus_texts: DatasetRef | None = None

    def __post_init__(self) -> None:
        if self.units_rule is not None:
            from evalvalidity.io.units_rule import parse_units_rule

            parse_units_rule(self.units_rule)
        seeds = self.seeds
        if seeds != "auto" and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
            raise ParameterError(
                "The 'seeds' parameter of check_benchmark must be 'auto' or an int >= 1. Got "
                f"{seeds!r} instead."
            )
        if self.noise_source not in get_args(NoiseSource):
            raise ParameterError(
                "The 'noise_source' parameter of check_benchmark must be 'noise-run' or 'live'. "
                f"Got {self.noise_source!r} instead."
            )
        if self.ties not in get_args(TiePolicy):
            raise ParameterError(
                "The 'ties' parameter of check_benchmark must be 'trec_eval', 'given' or "
                f"'average'. Got {self.ties!r} instead."
            )
        for name in ("harness_depth", "harness_seeds"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ParameterError(
                    f"The {name!r} parameter of check_benchmark must be None or an int >= 1. "
                    f"Got {value!r} instead."
                )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ParameterError(
                f"The 'seed' parameter of check_benchmark must be an int >= 0. Got {self.seed!r} "
                "instead."
            )
        if not isinstance(self.metric, str):
            raise ParameterError(
                f"The 'metric' of a CheckPlan must be a str. Got {self.metric!r} instead."
            )
        if not isinstance(self.qrels, DatasetRef):
            raise ParameterError(
                f"The 'qrels' of a CheckPlan must be a DatasetRef. Got {self.qrels!r} instead."
            )
        if not isinstance(self.pool, PoolDeclaration):
            raise ParameterError(
                "The 'pool' of a CheckPlan must be a PoolDeclaration. Got "
                f"{type(self.pool).__name__} instead."
            )
        names = [name for name, _ in self.compare]
        if len(set(names)) != len(names) or self.run_name in names:
            raise ParameterError(
                "The runs of a CheckPlan need distinct names. Got "
                f"{', '.join(map(repr, [self.run_name, *names]))}."
            )

    @property
    def refs(self) -> dict[str, DatasetRef]:
        """Every dataset the plan uses, by role (``run``, ``compare:<name>``, ``pool``, ...)."""
        out: dict[str, DatasetRef] = {}
        for role, ref in (
            ("run", self.run),
            ("qrels", self.qrels),
            ("pool", self.pool.ref),
            ("noise_run", self.noise_run),
            ("harness_output", self.harness_output),
            ("query_texts", self.query_texts),
            ("corpus_texts", self.corpus_texts),
        ):
            if ref is not None:
                out[role] = ref
        for name, ref in self.compare:
            out[f"compare:{name}"] = ref
        return out

    def replace(self, **changes: Any) -> CheckPlan:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data, with the layout's ``schema_version``."""
        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "run": _ref_dict(self.run),
            "run_name": self.run_name,
            "compare": [{"name": name, "ref": ref.to_dict()} for name, ref in self.compare],
            "qrels": self.qrels.to_dict(),
            "pool": self.pool.to_dict(),
            "noise_run": _ref_dict(self.noise_run),
            "noise_source": self.noise_source,
            "noise_components_off": (
                list(self.noise_components_off) if self.noise_components_off is not None else None
            ),
            "harness_output": _ref_dict(self.harness_output),
            "harness_depth": self.harness_depth,
            "harness_seeds": self.harness_seeds,
            "metric": self.metric,
            "ties": self.ties,
            "seeds": self.seeds,
            "seed": self.seed,
            "thresholds": {
                f.name: (
                    list(getattr(self.thresholds, f.name))
                    if f.name == "ratio_band"
                    else getattr(self.thresholds, f.name)
                )
                for f in dataclasses.fields(Thresholds)
            },
            "units_rule": self.units_rule,
            "query_texts": _ref_dict(self.query_texts),
            "corpus_texts": _ref_dict(self.corpus_texts),
        }

    @classmethod
    def from_dict(cls, record: Any) -> CheckPlan:
        """Inverse of :meth:`to_dict`.

        Raises
        ------
        ParameterError
            On a schema version this package does not read, an unknown or missing key, or a
            value a plan cannot hold.

        Examples
        --------
        >>> CheckPlan.from_dict({"schema_version": 1, "qrels": None, "colour": "red"})
        Traceback (most recent call last):
        ...
        evalvalidity.errors.ParameterError: Unknown key 'colour' in a check plan; expected some of schema_version, qrels, pool, run, run_name, compare, noise_run, noise_source, noise_components_off, harness_output, harness_depth, harness_seeds, metric, ties, seeds, seed, thresholds, units_rule, query_texts, corpus_texts.
        """
        if not isinstance(record, Mapping):
            raise ParameterError(f"A check plan must be an object. Got {record!r}.")
        known = ["schema_version", *(f.name for f in dataclasses.fields(cls))]
        unknown = sorted(str(k) for k in record if k not in known)
        if unknown:
            raise ParameterError(
                f"Unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"in a check plan; expected some of {', '.join(known)}."
            )
        version = record.get("schema_version")
        if version != PLAN_SCHEMA_VERSION:
            raise ParameterError(
                f"This version of evalvalidity reads check plans of schema version "
                f"{PLAN_SCHEMA_VERSION}. Got {version!r} instead."
            )
        missing = [k for k in ("qrels", "pool") if record.get(k) is None]
        if missing:
            raise ParameterError(f"A check plan needs {' and '.join(map(repr, missing))}.")
        values: dict[str, Any] = {k: v for k, v in record.items() if k != "schema_version"}
        for name in ("run", "qrels", "noise_run", "harness_output", "query_texts", "corpus_texts"):
            if values.get(name) is not None:
                values[name] = DatasetRef.from_dict(values[name], f"the plan's {name!r}")
        values["pool"] = PoolDeclaration.from_dict(values["pool"])
        compare = values.get("compare", [])
        if not isinstance(compare, list):
            raise ParameterError(f"The plan's 'compare' must be a list. Got {compare!r}.")
        pairs = []
        for item in compare:
            if not isinstance(item, Mapping) or set(item) != {"name", "ref"}:
                raise ParameterError(
                    f"Each run to compare must be an object with 'name' and 'ref'. Got {item!r}."
                )
            pairs.append((item["name"], DatasetRef.from_dict(item["ref"], "a run to compare")))
        values["compare"] = tuple(pairs)
        off = values.get("noise_components_off")
        if off is not None:
            if not isinstance(off, list | tuple) or not all(isinstance(c, str) for c in off):
                raise ParameterError(
                    f"The plan's 'noise_components_off' must be a list of str. Got {off!r}."
                )
            values["noise_components_off"] = tuple(off)
        if "thresholds" in values:
            raw = _fields_of(Thresholds, values["thresholds"], "the plan's thresholds")
            if "ratio_band" in raw and isinstance(raw["ratio_band"], list):
                raw["ratio_band"] = tuple(raw["ratio_band"])
            values["thresholds"] = Thresholds(**raw)
        return cls(**values)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The plan as JSON text (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> CheckPlan:
        """Inverse of :meth:`to_json`.

        Raises
        ------
        ParameterError
            When ``text`` is not JSON or not a plan.
        """
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise ParameterError(f"A check plan must be JSON: {exc}.") from exc
        return cls.from_dict(record)


@dataclass(frozen=True)
class CheckInputs:
    """The loaded tables a plan names: what :func:`check_benchmark` computes on.

    Attributes
    ----------
    qrels : pyarrow.Table
        The judgements (``QRELS_SCHEMA``).
    pool : PoolSpec
        The declared pool with its table loaded.
    run, noise_run : pyarrow.Table, optional
        Runs (``RUN_SCHEMA``).
    harness_output : pyarrow.Table, optional
        ``HARNESS_SCHEMA``.
    compare : mapping of str to pyarrow.Table
        The runs to compare, by the names the plan gives them.
    query_texts, corpus_texts : pyarrow.Table, optional
        ``id, text`` tables.
    """

    qrels: pa.Table
    pool: PoolSpec
    run: pa.Table | None = None
    noise_run: pa.Table | None = None
    harness_output: pa.Table | None = None
    compare: Mapping[str, pa.Table] = field(default_factory=dict)
    query_texts: pa.Table | None = None
    corpus_texts: pa.Table | None = None

    def check_against(self, plan: CheckPlan) -> None:
        """Refuse inputs that do not hold what ``plan`` names."""
        for role in ("run", "noise_run", "harness_output"):
            named = getattr(plan, role) is not None
            held = getattr(self, role) is not None
            if named != held:
                raise ParameterError(
                    f"The plan {'names' if named else 'names no'} {role.replace('_', ' ')} but "
                    f"the inputs hold {'none' if named else 'one'}."
                )
        if self.pool.kind != plan.pool.kind or self.pool.analytic_unit != plan.pool.analytic_unit:
            raise ParameterError(
                f"The plan declares a {plan.pool.kind} pool ({plan.pool.analytic_unit}) but the "
                f"inputs hold a {self.pool.kind} pool ({self.pool.analytic_unit})."
            )
        if plan.pool.corpus_size != self.pool.corpus_size:
            raise ParameterError(
                f"The plan declares a corpus of {plan.pool.corpus_size} items but the inputs "
                f"hold {self.pool.corpus_size}."
            )
        names = [name for name, _ in plan.compare]
        if sorted(names) != sorted(self.compare):
            raise ParameterError(
                f"The plan compares the runs {names} but the inputs hold {sorted(self.compare)}."
            )
