"""The Streamlit dashboard: ``streamlit run app/main.py`` routes to the pages in :mod:`app.views`."""
