"""The dashboard's caches and plan links: what reruns, what is shared, what a link opens.

AppTests (separate browser sessions) on the demo's toy benchmark, with the library's check and
the dataset loader wrapped in counters.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from evalvalidity.analysis import examples as demo
from evalvalidity.io.workspace import Workspace

APP = ROOT / "app" / "main.py"
TIMEOUT = 60
A, B = "a" * 32, "b" * 32


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    demo.build_demo(root, include=("toy",))
    return root


@pytest.fixture
def counted(monkeypatch):
    """The module ``app.state`` with its check and its dataset loader counted; empty caches."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    import streamlit as st

    from app import state

    st.cache_data.clear()
    st.cache_resource.clear()
    calls: dict[str, list[object]] = {"checks": [], "loads": []}
    check, load = state.check_benchmark, state._load_table

    def counting_check(plan, *args, **kwargs):
        calls["checks"].append(plan.metric)
        return check(plan, *args, **kwargs)

    def counting_load(ws, fingerprint, kind, owner):
        calls["loads"].append((fingerprint[0], owner))
        return load(ws, fingerprint, kind, owner)

    monkeypatch.setattr(state, "check_benchmark", counting_check)
    monkeypatch.setattr(state, "_load_table", counting_load)
    yield calls
    st.cache_data.clear()
    st.cache_resource.clear()


def _session(root: Path, monkeypatch, owner: str | None = None, **params: object) -> AppTest:
    monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(root))
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    if owner is not None:
        at.query_params["owner"] = owner
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _text(elements) -> str:
    return "\n".join(str(e.value) for e in elements).replace("\\", "")


def _param(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


# ------------------------------------------------------------------------------ caches


def test_changing_k_reloads_no_dataset_and_a_plan_seen_before_is_not_checked_again(
    toy, counted, monkeypatch
):
    at = _session(toy, monkeypatch, A)
    assert not at.exception
    assert "rr@10" in at.success[0].value
    assert counted["checks"] == ["rr@10"]
    loaded = sorted(name for name, _ in counted["loads"])
    assert loaded == ["toy.model", "toy.noise", "toy.qrels"]
    at.number_input(key="cfg_k").set_value(5).run()
    at.button(key="run_check").click().run()
    assert "rr@5" in at.success[0].value
    at.selectbox(key="cfg_ties").select("average").run()
    at.button(key="run_check").click().run()
    assert counted["checks"] == ["rr@10", "rr@5", "rr@5"]
    assert sorted(name for name, _ in counted["loads"]) == loaded  # k, ties: no dataset read
    at.number_input(key="cfg_k").set_value(10).run()
    at.selectbox(key="cfg_ties").select("trec_eval").run()
    at.button(key="run_check").click().run()
    assert "rr@10" in at.success[0].value
    assert counted["checks"] == ["rr@10", "rr@5", "rr@5"]  # the same plan: from the cache

    # Another browser opening the same plan of shared datasets gets the result computed above.
    other = _session(toy, monkeypatch, B)
    assert "rr@10" in other.success[0].value
    assert counted["checks"] == ["rr@10", "rr@5", "rr@5"]
    assert sorted(name for name, _ in counted["loads"]) == loaded


def _private_run(root: Path, owner: str, gold_first: bool) -> None:
    """A private run named ``mine``: the judged documents first, or after 50 others."""
    ws = Workspace(root)
    judged = ws.table("toy.qrels").to_pandas()
    lines = []
    for qid, docids in judged.groupby("qid")["docid"]:
        others = [f"{qid}-other{i}" for i in range(50)]
        ranked = [*docids, *others] if gold_first else [*others, *docids]
        lines += [f"{qid} Q0 {d} {r + 1} {100 - r} x\n" for r, d in enumerate(ranked)]
    ws.add("".join(lines).encode(), kind="run", name="mine", owner=f"session-{owner}")


def _check_mine(at: AppTest) -> AppTest:
    at.selectbox(key="cfg_run").select("mine").run()
    at.button(key="run_check").click().run()
    assert not at.exception
    return at


def test_another_owner_never_gets_the_first_owners_private_data(toy, counted, monkeypatch):
    _private_run(toy, A, gold_first=True)
    _private_run(toy, B, gold_first=False)
    first = _check_mine(_session(toy, monkeypatch, A))
    second = _check_mine(_session(toy, monkeypatch, B))
    # The two plans are the same JSON (same names, same settings); the data is not.
    assert first.session_state["config"].plan == second.session_state["config"].plan
    model = next(m for m in first.metric if m.label.startswith("Model"))
    theirs = next(m for m in second.metric if m.label.startswith("Model"))
    assert model.value == "1"
    assert float(theirs.value) < 0.1
    owners = {owner for name, owner in counted["loads"] if name == "mine"}
    assert owners == {f"session-{A}", f"session-{B}"}
    # The toy example (shared) once for both; ``mine`` once per owner.
    assert counted["checks"] == ["rr@10", "rr@10", "rr@10"]
    # The first owner's result and table are still theirs on a second look.
    again = _check_mine(_session(toy, monkeypatch, A))
    assert next(m for m in again.metric if m.label.startswith("Model")).value == "1"
    assert len(counted["checks"]) == 3


def test_a_dataset_replaced_under_the_same_name_is_read_again(toy, counted, monkeypatch):
    _private_run(toy, A, gold_first=True)
    at = _check_mine(_session(toy, monkeypatch, A))
    assert [n for n, _ in counted["loads"]].count("mine") == 1
    # Replaced under the same name: its id and content hash differ, so it is read again.
    ws = Workspace(toy)
    ws.delete("mine", owner=f"session-{A}")
    _private_run(toy, A, gold_first=False)
    at.button(key="new_benchmark").click().run()
    at.selectbox(key="cfg_qrels").select("toy.qrels").run()
    at.number_input(key="cfg_corpus").set_value(200).run()
    _check_mine(at)
    assert [n for n, _ in counted["loads"]].count("mine") == 2
    assert float(next(m for m in at.metric if m.label.startswith("Model")).value) < 0.1


# ------------------------------------------------------------------------------- links


def _link(at: AppTest) -> str:
    codes = [c.value for c in at.code]
    assert len(codes) == 1, codes
    return str(codes[0])


def test_a_link_names_the_plan_and_opens_it_checked_in_another_session(toy, counted, monkeypatch):
    at = _session(toy, monkeypatch, A)
    at.number_input(key="cfg_k").set_value(5).run()
    at.button(key="run_check").click().run()
    link = _link(at)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
    assert query == {
        "run": ["toy.model"],
        "qrels": ["toy.qrels"],
        "noise": ["toy.noise"],
        "pool_kind": ["corpus"],
        "pool": ["200"],
        "metric": ["rr"],
        "k": ["5"],
        "ties": ["trec_eval"],
        "seeds": ["20"],
    }
    assert A not in link  # the owner token never travels in a link
    assert "never named" in _text(at.caption)

    other = _session(toy, monkeypatch, B, **{k: v[0] for k, v in query.items()})
    assert not other.exception
    assert "Opened the plan from the link." in _text(other.info)
    assert "rr@5" in other.success[0].value
    assert other.number_input(key="cfg_k").value == 5
    assert other.selectbox(key="cfg_noise").value == "toy.noise"
    assert _param(other, "run") is None and _param(other, "owner") == B  # the link is consumed
    assert counted["checks"] == ["rr@10", "rr@5"]  # the very same plan: from the cache


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"run": "nope", "qrels": "toy.qrels", "pool": "200"},
            "The link names datasets this workspace does not share: 'nope'.",
        ),
        (
            {"run": "mine", "qrels": "toy.qrels", "pool": "200"},
            "The link names datasets this workspace does not share: 'mine'.",
        ),
        (
            {"qrels": "toy.qrels", "pool": "200", "k": "abc"},
            "The link's 'k' must be an integer >= 1. Got 'abc' instead.",
        ),
        ({"run": "toy.model", "pool": "200"}, "The link names no judgements"),
        (
            {"qrels": "toy.qrels", "pool": "200", "metric": "xyz"},
            "Unknown metric 'xyz'",
        ),
    ],
)
def test_a_bad_link_says_why_and_changes_nothing(toy, counted, monkeypatch, params, message):
    _private_run(toy, A, gold_first=True)  # another owner's private dataset is never found
    at = _session(toy, monkeypatch, B, **params)
    assert not at.exception
    assert "The link cannot be opened" in _text(at.error)
    assert message in _text(at.error)
    assert at.selectbox(key="cfg_example").value == "Healthy toy benchmark"
    assert all(_param(at, key) is None for key in params)


def test_a_plan_naming_a_private_dataset_has_no_link(toy, counted, monkeypatch):
    _private_run(toy, A, gold_first=True)
    at = _check_mine(_session(toy, monkeypatch, A))
    assert not at.code
    shown = _text(at.warning)
    assert "names private datasets (mine)" in shown
    assert "a link never names a private dataset" in shown
    # The private dataset hides the shared one of the same name: a link to it cannot open.
    Workspace(toy).add(b"q01 Q0 d1 1 1.0 x\n", kind="run", name="mine")
    opened = _session(toy, monkeypatch, A, run="mine", qrels="toy.qrels", pool="200")
    assert "datasets of yours with the same names hide them" in _text(opened.error)
