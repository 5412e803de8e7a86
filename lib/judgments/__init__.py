"""Judgments in: the formats users upload, read into canonical votes (``formats``), the bundled data
sets (``datasets``), the net ratings every model reads (``ratings``) and how reliable each
annotator is (``annotator_quality``).
"""
