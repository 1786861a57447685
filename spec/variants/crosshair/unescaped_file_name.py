"""F1 broken: the first design of the file name, ``<key><ns>.bin`` with the key not escaped.

Key ``x_b`` in namespace ``_a`` and key ``x`` in ``_b_a`` then share a file, and the model's
:func:`spec.models.file_names.key_of` cannot read a key back from its name.
"""

from __future__ import annotations

from ...models.file_names import key_of  # noqa: F401 -- used by the contract in the docstring

__all__ = ["file_name"]


def file_name(key: str, ns: str) -> str:
    """F1: the file of ``key`` in namespace ``ns`` (BROKEN: the key's ``%`` and ``_`` are not escaped).

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: ns == "" or ns.startswith("_")
    post: __return__.endswith(ns + ".bin")
    post: key_of(__return__, ns) == key
    """
    return key + ns + ".bin"  # BUG: no escaping
