"""Workspace: upload eval exports, see what was detected and rejected, manage the datasets."""

import pandas as pd
import streamlit as st

from app import explain, state, widgets
from evalvalidity.analysis import examples as demo
from evalvalidity.errors import EvalValidityError
from evalvalidity.io.ingest import KINDS, mapped_header
from evalvalidity.io.workspace import DatasetInfo

KIND_HELP = {
    "run": "a ranking (TREC, CSV/TSV, JSONL, JSON, Parquet)",
    "qrels": "judgements (TREC qrels, BEIR TSV, CSV, JSONL, JSON, Parquet)",
    "pools": "per-query pool sizes (qid, pool_size)",
    "units": "a units map (chunk_id, doc_id)",
    "candidates": "per-query candidate lists (qid, docid)",
    "corpus-size": "one integer: the corpus size",
    "harness": "your harness's output on noise runs (trec_eval -q, or CSV seed,qid,value)",
}

st.title("Workspace")
info: DatasetInfo | None  # the dataset a form below adds or manages
ws = state.workspace()
st.caption(
    f"Datasets live in `{ws.path}`. Your uploads stay private to this browser until you "
    "save them to the shared workspace; the page's address keeps your token (owner=…): "
    "bookmark it to find them again from another tab."
)

flash = state.pop_flash()
if flash:
    st.success(flash)

limit_mb = int(st.get_option("server.maxUploadSize"))
uploads = st.file_uploader(
    "Upload eval exports: runs, qrels, pool sizes, candidate lists, units maps, noise runs, "
    "harness output (gzip accepted)",
    accept_multiple_files=True,
    key="uploads",
)
st.caption(
    f"Up to {limit_mb:,} MB per file (server.maxUploadSize). The browser refuses larger "
    "files before they are sent: ingest them with `evalvalidity ingest FILE "
    "--workspace PATH` instead, or restart with a larger `--server.maxUploadSize`. "
    "The format and the kind are recognised from the content, never from the name."
)


ready = []
add_all = st.container()
for upload in uploads or []:
    fid = str(upload.file_id)
    with st.container(border=True):
        done = state.added(fid)
        if done:
            st.markdown(
                f"**{explain.md(upload.name)}** · {explain.size(upload.size)} · "
                f"added as **{explain.md(done)}**"
            )
            continue
        what, kind_col, name_col = st.columns([3, 2, 2])
        with kind_col:
            kind_choice = st.selectbox(
                "Kind",
                ["detect", *KINDS],
                key=f"kind_{fid}",
                format_func=lambda k: (
                    "detect from the content" if k == "detect" else f"{k}: {KIND_HELP[k]}"
                ),
            )
        kind = None if kind_choice == "detect" else kind_choice
        with what:
            st.markdown(f"**{explain.md(upload.name)}** · {explain.size(upload.size)}")
            bar, update = widgets.progress_bar(f"Reading {upload.name}")
            found = state.preview(upload, kind, progress=update)
            bar.empty()
            if found.ok:
                gz = ", gzip-compressed" if found.compression else ""
                st.markdown(
                    f"Detected **{found.kind}** in **{found.format}** format{gz} · "
                    f"{explain.count(found.n_rows, 'good row')}"
                )
                mapping = mapped_header(upload.getvalue(), kind=kind, display_name=upload.name)
                if mapping is not None:
                    st.caption(f"Columns: {explain.md(mapping)}")
                for warning in found.warnings:
                    st.caption(explain.md(warning))
        if not found.ok:
            st.error(explain.ui_message(str(found.error)))
            st.caption("If the kind is ambiguous, choose it above.")
            continue
        with name_col:
            name = st.text_input(
                "Dataset name",
                key=f"name_{fid}",
                placeholder="automatic: the file's name",
                help="Letters, digits, spaces and ._+@=- (never a path).",
            )
        accept = True
        if found.n_rejected:
            were = "was" if found.n_rejected == 1 else "were"
            st.warning(
                f"{explain.count(found.n_rejected, 'row')} {were} rejected. Nothing is stored "
                f"until you accept dropping {'it' if found.n_rejected == 1 else 'them'} (or fix "
                "the file and upload it again)."
            )
            unit = found.line_unit
            st.dataframe(
                pd.DataFrame(
                    [
                        {unit: line, "reason": reason, "content": explain.excerpt(raw)}
                        for line, reason, raw in found.rejected
                    ]
                ),
                hide_index=True,
                height=200,
            )
            accept = st.checkbox(
                f"Drop the {explain.count(found.n_rejected, 'rejected row')} and keep the "
                f"{explain.count(found.n_rows, 'good one')}",
                key=f"accept_{fid}",
            )
        if accept:
            ready.append((upload, found, name))
        if st.button("Add to workspace", key=f"add_{fid}", type="primary", disabled=not accept):
            bar, update = widgets.progress_bar(f"Storing {upload.name}")
            try:
                info = state.add_upload(
                    upload,
                    kind=str(found.kind),
                    name=name or None,
                    drop_bad_rows=bool(found.n_rejected),
                    progress=update,
                )
            except EvalValidityError as exc:
                bar.empty()
                st.error(explain.ui_message(str(exc)))
            else:
                state.flash(f"Added {info.name} ({info.kind}).")
                st.rerun()

with add_all:
    if len(ready) > 1 and st.button(f"Add all {len(ready)} files", key="add_all", type="primary"):
        added = []
        for upload, found, name in ready:
            bar, update = widgets.progress_bar(f"Storing {upload.name}")
            try:
                info = state.add_upload(
                    upload,
                    kind=str(found.kind),
                    name=name or None,
                    drop_bad_rows=bool(found.n_rejected),
                    progress=update,
                )
            except EvalValidityError as exc:
                st.error(explain.ui_message(str(exc)))
            else:
                added.append(info.name)
            bar.empty()
        if added:
            state.flash("Added " + ", ".join(added) + ".")
            st.rerun()

st.header("Datasets")
visible = state.datasets()
if not visible:
    st.info(
        "No datasets yet. Upload files above, or add the bundled examples: the write-up's "
        "toy benchmark, pool of 8 and units bug, and Cranfield."
    )
    if st.button("Add the demo datasets", key="add_demo"):
        bar, update = widgets.progress_bar("Adding the demo datasets")
        try:
            demo.build_demo(ws, progress=update)
        except EvalValidityError as exc:
            st.error(str(exc))
        else:
            state.flash("Added the demo datasets and their examples.")
            st.rerun()
    st.stop()

me = state.owner()
st.dataframe(
    pd.DataFrame(
        [
            {
                "name": d.name,
                "kind": d.kind,
                "format": d.format + (" (gzip)" if d.compression else ""),
                "rows": d.n_rows,
                "dropped rows": d.n_rejected,
                "visibility": "private to this session" if d.owner == me else "shared",
                "source file": d.source_name,
                "size": explain.size(d.size_bytes),
                "added": d.created,
            }
            for d in visible
        ]
    ),
    hide_index=True,
    key="datasets_table",
)

st.subheader("Manage a dataset")
chosen = st.selectbox("Dataset", [d.name for d in visible], key="manage_name")
info = next((d for d in visible if d.name == chosen), None)
if info is not None:
    st.caption(
        f"{info.kind} from `{info.source_name}` · SHA-256 `{info.sha256[:16]}…` · "
        + ("private to this session" if info.owner == me else "shared")
    )
    for warning in info.warnings:
        st.caption(explain.md(warning))
    if info.rejected:
        with st.expander(f"{explain.count(info.n_rejected, 'row')} dropped at upload"):
            st.dataframe(
                pd.DataFrame(info.rejected, columns=[info.line_unit, "reason"]), hide_index=True
            )
    rename_col, share_col, delete_col = st.columns(3)
    with rename_col:
        new_name = st.text_input("New name", key="rename_to")
        if st.button("Rename", key="rename", disabled=not new_name):
            try:
                state.rename(info.name, new_name)
            except EvalValidityError as exc:
                st.error(str(exc))
            else:
                state.flash(f"Renamed {info.name} to {new_name}.")
                st.rerun()
    with share_col:
        if info.owner == me and st.button("Save to the shared workspace", key="share"):
            try:
                state.share(info.name)
            except EvalValidityError as exc:
                st.error(str(exc))
            else:
                state.flash(f"{info.name} is now shared.")
                st.rerun()
    with delete_col:
        sure = st.checkbox(f"Yes, delete {info.name}", key="delete_sure")
        if st.button("Delete", key="delete", disabled=not sure):
            try:
                state.delete(info.name)
            except EvalValidityError as exc:
                st.error(str(exc))
            else:
                state.flash(f"Deleted {info.name}.")
                st.rerun()
