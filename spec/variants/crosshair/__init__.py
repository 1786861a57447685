"""Deliberately broken functions that CrossHair must refute: proof that the contract check can fail.

Each module holds one broken function of a model, standalone, with the PEP 316 contracts its bug
breaks, so an edit of the model never has to be copied here.  (A wrapper of the model's own function
that breaks one step was tried for the stale birth: CrossHair refuted it within 3 s per condition in
one run of three, the plain function in every run.)

Beside each module, ``<module>.expected`` lists the conditions CrossHair must refute, one a line as
``function | condition``: the function's name and the text of the contract line, no path and no line
number (``tests/contracts/crosshair_runner.py`` normalizes CrossHair's output to that form).  More
refutations than listed are fine; fewer fail ``tests/contracts/test_crosshair.py``.
"""
