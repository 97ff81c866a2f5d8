"""evalvalidity's dashboard: the entry script only routes (``streamlit run app/main.py``).

The dashboard is the package ``app`` (a checkout's ``app/``, a wheel's ``evalvalidity/_app/app``);
its pages import it as ``from app import state``. Streamlit puts only this script's folder on
``sys.path``, so its parent goes first: the pages then find this copy of the package, whatever the
working directory.
"""

import sys
from pathlib import Path

import streamlit as st

_PARENT = str(Path(__file__).resolve().parent.parent)
if _PARENT not in sys.path:
    sys.path.insert(0, _PARENT)

st.set_page_config(page_title="evalvalidity", page_icon=":material/straighten:", layout="wide")

pages = [
    st.Page("views/health.py", title="Health", icon=":material/monitor_heart:", default=True),
    st.Page(
        "views/workspace.py", title="Workspace", icon=":material/folder_open:", url_path="workspace"
    ),
    st.Page(
        "views/queries.py", title="Queries", icon=":material/manage_search:", url_path="queries"
    ),
    st.Page(
        "views/diagnostics.py",
        title="Diagnostics",
        icon=":material/query_stats:",
        url_path="diagnostics",
    ),
    st.Page(
        "views/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"
    ),
    st.Page("views/live.py", title="Live test", icon=":material/bolt:", url_path="live"),
    st.Page("views/report.py", title="Report", icon=":material/description:", url_path="report"),
    st.Page("views/suite.py", title="Suite", icon=":material/table_view:", url_path="suite"),
    st.Page("views/history.py", title="History", icon=":material/timeline:", url_path="history"),
    st.Page("views/nulls.py", title="Other nulls", icon=":material/rule:", url_path="nulls"),
]
page = st.navigation(pages)
from app import state  # noqa: E402  (after the path is set up)

state.owner()  # the owner token stays in the address, on every page
state.open_link()  # a plan named in the address (?run=...&qrels=...) becomes the checked one
opened = state.link_message()
if opened is not None:
    (st.error if opened[0] == "error" else st.info)(opened[1], icon=":material/link:")
page.run()
