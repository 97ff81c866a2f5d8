"""A suite sees the datasets of its owner: private uploads are usable by their owner only."""

from __future__ import annotations

import pytest
from conftest import TOY

from evalvalidity.analysis.suite import parse_suite, run_suite
from evalvalidity.io.workspace import Workspace

SUITE = (
    'name = "private"\nseeds = 4\n[[benchmark]]\nname = "toy"\nqrels = "toy-qrels"\n'
    'runs = { model = "toy-model", noise = "toy-noise" }\npool_size = 200\n'
)


@pytest.fixture
def workspace(tmp_path):
    ws = Workspace(tmp_path / "ws")
    for name, file in [("toy-qrels", "qrels.txt"), ("toy-model", "model.trec")]:
        ws.add(TOY / file, name=name, owner="alice")
    ws.add(TOY / "noise.trec", name="toy-noise", owner="alice")
    return ws


def _error(ws: Workspace, owner: str | None) -> str | None:
    outcome = run_suite(parse_suite(SUITE, "s.toml"), workspace=ws, owner=owner, n_resamples=100)
    return outcome.outcomes[0].error


def test_a_private_dataset_is_usable_by_its_owner_in_a_suite(workspace):
    result = run_suite(
        parse_suite(SUITE, "s.toml"), workspace=workspace, owner="alice", n_resamples=100
    )
    (outcome,) = result.outcomes
    assert outcome.error is None
    assert outcome.result.verdict == "healthy"
    assert set(outcome.values) == {"model", "noise"}
    assert [m.run for m in result.means] == ["model", "noise"]


def test_another_owner_sees_a_private_dataset_as_missing(workspace):
    hidden = {owner: _error(workspace, owner) for owner in ("bob", None)}
    assert (
        hidden["bob"] is not None and "'toy-qrels' is neither a file nor a dataset" in hidden["bob"]
    )
    for name in ("toy-qrels", "toy-model", "toy-noise"):
        workspace.delete(name, owner="alice")
    missing = {owner: _error(workspace, owner) for owner in ("bob", None)}
    assert hidden == missing


def test_the_suite_page_uses_the_sessions_private_uploads(workspace, monkeypatch):
    from conftest import ROOT
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(workspace.path))
    token = "0123456789abcdef0123456789abcdef"
    for name in ("toy-qrels", "toy-model", "toy-noise"):
        workspace.set_owner(name, f"session-{token}", owner="alice")

    def suite_page(owner_token: str) -> dict[str, str]:
        at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60)
        at.query_params["owner"] = owner_token
        at.switch_page("views/suite.py").run()
        at.text_area(key="s_toml").set_value(SUITE).run()
        at.button(key="s_run").click().run()
        assert not at.exception
        table = next(d for d in at.dataframe if "verdict" in d.value.columns).value
        return dict(zip(table["benchmark"], table["verdict"], strict=True))

    assert suite_page(token) == {"toy": "healthy"}
    (stranger,) = suite_page("f" * 32).values()
    assert stranger.startswith("error: 'toy-qrels' is neither a file nor a dataset")
