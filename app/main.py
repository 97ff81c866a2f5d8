"""evalvalidity's dashboard: the entry script only routes (``streamlit run app/main.py``)."""

import streamlit as st

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
    st.Page("views/report.py", title="Report", icon=":material/description:", url_path="report"),
]
st.navigation(pages).run()
