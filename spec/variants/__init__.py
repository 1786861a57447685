"""Deliberately wrong variants and correct alternatives of the models, one home for every checker."""
