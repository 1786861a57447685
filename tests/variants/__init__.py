"""Deliberately wrong implementations: each must be caught by the conformance machines."""
