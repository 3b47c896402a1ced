"""Streamlit helpers shared by app.py and the pages (Streamlit lives here, not in attnviz/).

Streamlit ignores Python files in subfolders of pages/, so this package is not a page.
"""
