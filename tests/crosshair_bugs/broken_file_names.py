"""A broken copy of the F1 naming of spec/file_store.py: CrossHair must refute it (see .expected).

The broken ``file_name`` is the first design: ``<key><namespace>.bin`` with the
key unescaped, so key "x_b" in namespace "_a" and key "x" in "_b_a" share a file.
"""

from __future__ import annotations

__all__ = ["file_name", "key_of", "same_file"]


def file_name(key: str, ns: str) -> str:
    """F1: the file of ``key`` in namespace ``ns`` (BROKEN: the key is not escaped).

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: ns == "" or ns.startswith("_")
    post: __return__.endswith(ns + ".bin")
    post: key_of(__return__, ns) == key
    """
    return key + ns + ".bin"


def key_of(name: str, ns: str) -> str | None:
    """F1: the key whose file is ``name`` in namespace ``ns`` (it starts at the first ``_``), or None.

    pre: ns == "" or ns.startswith("_")
    post: __return__ is None or file_name(__return__, ns) == name
    """
    stem, dot_bin = name[:-4], name[-4:]
    part, mark, rest = stem.partition("_")
    if dot_bin != ".bin" or not part or part[0] == "." or mark + rest != ns:
        return None
    key = "%".join(piece.replace("%5F", "_") for piece in part.split("%25"))
    return key if "/" not in key and "\0" not in key and file_name(key, ns) == name else None


def same_file(key: str, ns: str, other_key: str, other_ns: str) -> bool:
    """F1: two stores name the same file only for the same key in the same namespace.

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: other_key != "" and not other_key.startswith(".")
    pre: "/" not in other_key and chr(0) not in other_key
    pre: ns == "" or ns.startswith("_")
    pre: other_ns == "" or other_ns.startswith("_")
    post: not __return__ or (key == other_key and ns == other_ns)
    """
    return file_name(key, ns) == file_name(other_key, other_ns)
