"""The dashboard's pages, one script each (Streamlit runs them; they import :mod:`app`)."""
