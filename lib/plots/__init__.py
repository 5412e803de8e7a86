"""Plotly figure builders, one module per topic."""
