"""Efficient human evaluation of language models: pure computation behind the dashboard.

Nothing in this package imports streamlit; every function works in a notebook.
"""
