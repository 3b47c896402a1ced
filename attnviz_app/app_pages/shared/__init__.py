"""Streamlit widgets and caching shared by the pages (Streamlit lives here, not in attnviz/).

attnviz_app/frame.py routes the pages with st.navigation; this package holds no page.
"""
