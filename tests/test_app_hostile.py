"""The dashboard on a workspace whose IDs hold every character that broke something.

Every C0 control (NUL, ESC, form feed...), DEL, U+FFFE, U+FFFF, the RTL override, a line
separator and a 10,000-character ID, in the run, the noise run and the judgements: every page
renders, and on the Report page every download (the HTML report, the JSON, the Markdown, the
zip, each chart's PNG and SVG) is produced as a click produces it, by the deferred callable the
button registered. vl-convert aborted the whole process (the dashboard's server) on such text,
so the sessions run in a child process whose exit code tells; a lone surrogate is refused at
ingest (the rows holding it are the only ones rejected).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from evalvalidity.io.workspace import Workspace

CONTROLS = [chr(c) for c in range(0x20)]
HOSTILE = [*CONTROLS, "\x7f", "\ufffe", "\uffff", "\u202e", "\u2028", "\x85"]
QIDS = (
    [f"q{c}x" for c in HOSTILE] + ["q\u202e\u202eevil", "L" * 10_000] + [f"ok{i}" for i in range(4)]
)
LONE_SURROGATE = "q\ud800x"


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("ascii")


@pytest.fixture(scope="module")
def hostile_workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile") / "ws"
    ws = Workspace(root)
    # the gold item is ranked second for the hostile queries: each of them is "worst", shown
    run = [
        {"qid": q, "docid": f"{q}-d{i}", "score": 3.0 - i}
        for q in [*QIDS, LONE_SURROGATE]
        for i in range(3)
    ]
    noise = [{"qid": q, "docid": f"{q}-n{i}", "score": 3.0 - i} for q in QIDS for i in range(3)]
    qrels = [{"qid": q, "docid": f"{q}-d{1 if q in QIDS[:-4] else 0}", "rel": 1} for q in QIDS]
    added = ws.add(_jsonl(run), name="hostile-run", kind="run", drop_bad_rows=True)
    ws.add(_jsonl(noise), name="hostile-noise", kind="run")
    ws.add(_jsonl(qrels), name="hostile-qrels", kind="qrels")
    return root, added


def test_ingest_keeps_every_hostile_id_and_refuses_only_the_lone_surrogate(hostile_workspace):
    root, added = hostile_workspace
    assert added.n_rejected == 3  # the three rows of the lone surrogate's query
    qids = set(Workspace(root).table("hostile-run").column("qid").to_pylist())
    assert qids == set(QIDS)


CHILD = r"""
import json
import sys

from streamlit.runtime import media_file_manager
from streamlit.testing.v1 import AppTest

app, corpus = sys.argv[1], int(sys.argv[2])
deferred = {}
register = media_file_manager.MediaFileManager.add_deferred


def recording(self, data, mimetype, coordinates, **kwargs):
    file_id = register(self, data, mimetype, coordinates, **kwargs)
    deferred[file_id] = data
    return file_id


media_file_manager.MediaFileManager.add_deferred = recording
at = AppTest.from_file(app, default_timeout=300)
at.run()
at.selectbox(key="cfg_run").select("hostile-run").run()
at.selectbox(key="cfg_qrels").select("hostile-qrels").run()
at.selectbox(key="cfg_noise").select("hostile-noise").run()
at.radio(key="cfg_pool_kind").set_value("corpus").run()
at.number_input(key="cfg_corpus").set_value(corpus).run()
at.button(key="run_check").click().run()
assert not at.exception, at.exception
banner = [e.value for e in [*at.success, *at.warning, *at.error] if "Verdict" in str(e.value)]
assert banner, [e.value for e in at.error]
pages = {}
for page in ["health", "workspace", "queries", "diagnostics", "compare", "live", "report",
             "suite", "history", "nulls"]:
    deferred.clear()
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception, (page, at.exception)
    pages[page] = [e.value for e in at.error]
    if page != "report":
        continue
    produced = {}
    for button in at.download_button:
        button.click().run()  # on_click="ignore": the page stays as it is
        assert not at.exception, (button.key, at.exception)
        data = deferred[button.proto.deferred_file_id]()  # what the server runs on the click
        produced[button.key] = [len(data), bytes(data[:8]).hex()]
        if button.key == "dl_json":
            pages["json_qids"] = [q["qid"] for q in json.loads(data)["queries"]]
    pages["downloads"] = produced
print(json.dumps({"banner": banner[0], "pages": pages}))
"""


def test_every_page_and_every_download_survive_hostile_ids(hostile_workspace, tmp_path):
    root, _ = hostile_workspace
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "EVALVALIDITY_WORKSPACE": str(root),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT / "app" / "main.py"), "1000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # an abort is -6 (SIGABRT)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "Verdict" in report["banner"]
    pages = report["pages"]
    assert set(QIDS) == set(pages.pop("json_qids"))  # every ID, as it was read
    assert all(errors == [] for page, errors in pages.items() if page != "downloads")
    assert len(pages) == 11  # ten pages and the downloads
    downloads = report["pages"]["downloads"]
    assert {"dl_html", "dl_json", "dl_md", "dl_zip"} <= set(downloads)
    charts = {key for key in downloads if key.startswith(("dl_png_", "dl_svg_"))}
    assert len(charts) >= 6 and len(charts) % 2 == 0
    assert all(size > 0 for size, _ in downloads.values())
    assert downloads["dl_zip"][1].startswith("504b")  # PK
    assert bytes.fromhex(downloads["dl_html"][1]) == b"<!DOCTYP"
    assert bytes.fromhex(downloads["dl_json"][1]).startswith(b"{")
    for key in charts:
        head = bytes.fromhex(downloads[key][1])
        assert head == (b"\x89PNG\r\n\x1a\n" if key.startswith("dl_png_") else b"<svg xml"), key
