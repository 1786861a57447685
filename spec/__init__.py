"""spec: executable models of docs/SEMANTICS.md and the machinery that checks implementations against them.

The models (``spec/<component>.py``) use the standard library only.  The
conformance machinery (``spec.machines``, ``spec.verify``, ``spec.report``,
``spec.pytest_plugin``) needs the ``dev`` extra (Hypothesis, pytest, CrossHair).
"""
