"""Live noise test: embed texts with real vectors and with noise, retrieve both, check both."""

import os
import tempfile
from pathlib import Path

import streamlit as st

from app import explain, widgets
from evalvalidity.errors import EvalValidityError
from evalvalidity.report import records as report

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "live"
EMBEDDERS = {
    "hashing": "hashing: numpy only, always available",
    "wordllama": "wordllama: a 256-dimensional static embedding (pip install 'evalvalidity[live]')",
    "sentence-transformers": "sentence-transformers: a model you have locally",
    "custom": "module:function: your own embed(texts) -> array",
}

st.title("Live noise test")
st.caption(
    "Check 2 on your texts: the same retrieval with the embedder's vectors and with every "
    "vector replaced by noise of the same norms. A benchmark that measures retrieval scores the "
    "noise run at its exact floor."
)

source = st.radio(
    "Texts",
    ["the bundled standard-library docstrings benchmark", "upload my own"],
    horizontal=True,
    key="live_source",
)
uploads: dict[str, object] = {}
if source == "upload my own":
    columns = st.columns(3)
    for column, (name, label) in zip(
        columns,
        (
            ("corpus", "Corpus (JSONL {_id, title, text} or id<TAB>text)"),
            ("queries", "Queries (same layouts)"),
            ("qrels", "Judgements (any qrels format)"),
        ),
        strict=True,
    ):
        with column:
            uploads[name] = st.file_uploader(label, key=f"live_{name}")

choice = st.selectbox(
    "Embedder", list(EMBEDDERS), format_func=lambda k: EMBEDDERS[k], key="live_embedder"
)
embedder = choice
if choice == "sentence-transformers":
    model = st.text_input("Model (a local folder, or a name in your Hugging Face cache)")
    embedder = f"sentence-transformers:{model}"
elif choice == "custom":
    embedder = st.text_input("module:function", placeholder="my_pipeline:embed")
metric = st.text_input("Metric", value="mrr@10", key="live_metric")

if st.button("Run the live noise test", type="primary"):
    from evalvalidity.analysis.live import noise_test, read_texts
    from evalvalidity.core.embed import load_embedder
    from evalvalidity.io.ingest import read_qrels

    bar, update = widgets.progress_bar("Live noise test")
    try:
        with tempfile.TemporaryDirectory(prefix="evalvalidity-live-") as folder:
            if source == "upload my own":
                missing = [name for name, up in uploads.items() if up is None]
                if missing:
                    raise EvalValidityError(f"Upload the {' and the '.join(missing)} first.")
                paths = {}
                for name, up in uploads.items():
                    # the uploaded file's own name, never a path from it, names it in messages
                    path = os.path.join(folder, os.path.basename(str(up.name)) or name)  # type: ignore[attr-defined]
                    with open(path, "wb") as handle:
                        handle.write(up.getvalue())  # type: ignore[attr-defined]
                    paths[name] = path
            else:
                paths = {
                    "corpus": str(BUNDLED / "corpus.jsonl"),
                    "queries": str(BUNDLED / "queries.jsonl"),
                    "qrels": str(BUNDLED / "qrels.tsv"),
                }
            update(0.0, f"Loading the {embedder} embedder")
            result = noise_test(
                load_embedder(embedder),
                read_texts(paths["corpus"], "the corpus"),
                read_texts(paths["queries"], "the queries"),
                read_qrels(paths["qrels"]),
                metric=metric,
                progress=update,
            )
        st.session_state["live_result"] = (embedder, result)
    except EvalValidityError as exc:
        st.error(explain.md(str(exc)))
    finally:
        bar.empty()

if "live_result" in st.session_state:
    used, result = st.session_state["live_result"]
    live = result.live
    st.subheader(f"Verdict: {result.verdict}")
    a, b, c = st.columns(3)
    a.metric(f"model ({used})", f"{live.model:.4g}")
    b.metric("noise run", f"{live.noise:.4g}")
    c.metric("exact floor", f"{live.floor:.4g}")
    st.markdown(report.to_markdown(result))
