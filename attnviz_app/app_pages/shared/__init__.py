"""Streamlit widgets and caching shared by the pages (Streamlit lives here, not in attnviz/).

app.py routes the pages with st.navigation, so nothing under pages/ is discovered on its own;
this package holds no page.
"""
