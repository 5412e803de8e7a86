"""Revision edits and Revision Distance (Ma et al. 2024): edit sources, location, metrics."""
