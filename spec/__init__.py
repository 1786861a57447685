"""spec: executable models of docs/SEMANTICS.md and the machinery that checks implementations against them.

Read it in layers:

* :mod:`.models`: the seven small models (one per component, the file store's pure functions, and the
  bad-input refusals), standard library only;
* :mod:`.world`: the fake clock and the fake filesystem the checks drive;
* :mod:`.machines`, :mod:`.variants`, :mod:`.modelcheck`, :mod:`.linearizability`, :mod:`.oracle`: the
  checkers, and the wrong variants that prove each can fail;
* :mod:`.conformance`: ``make verify`` and the conformance report.

The checkers need the ``dev`` extra (Hypothesis, pytest, CrossHair).  Imports inside the package are
relative: it is ``spec`` in the repository and ``hicache_spec`` once installed (pyproject.toml maps the
folder), and the strings that name its modules are made from :data:`PACKAGE`.
"""

__all__ = ["PACKAGE"]

PACKAGE = __name__  # "spec" in the repository, "hicache_spec" when installed
