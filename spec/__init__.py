"""spec: executable models of docs/SEMANTICS.md and the machinery that checks implementations against them.

The models (``spec/<component>.py``) use the standard library only.  The
conformance machinery (``spec.machines``, ``spec.verify``, ``spec.report``,
``spec.pytest_plugin``) needs the ``dev`` extra (Hypothesis, pytest, CrossHair).
"""

# An editable install maps ``hicache_spec`` onto this folder: its modules are then loaded with their
# ``spec.*`` references rewritten, as the wheel's are (spec/_rename.py), so that a project with its own
# ``spec`` module does not capture them.  The wheel's copy lives in a folder named hicache_spec: no hook.
if __name__ != "spec" and __path__ and __path__[0].replace("\\", "/").rstrip("/").endswith("/spec"):
    from importlib import import_module as _import_module

    _import_module(f"{__name__}._rename").install(__name__, __path__[0])
