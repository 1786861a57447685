"""FileTrust: which nodes a :class:`~hicache.file_store.HiCacheFile` trusts (docs/SEMANTICS.md S1, S3).

The storage directory must be a directory of this user (or root's), writable by no one else but the shared
group (S1); a fanout subdirectory (F1-fanout) the same, of this user or of the shared group; a page is a
regular file of this user, or of the shared group (S3).  One page test serves a ``stat`` and a listing
entry alike (both carry ``kind``, ``uid`` and ``gid``).

A variant that trusts differently is a subclass set as the store's ``trust`` class attribute.

Complexity: every test O(1); ``trusted_directory`` one ``resolve`` and one ``mkdir``.  Thread model:
immutable after construction; any thread.
"""

from __future__ import annotations

import grp
import logging
import os
import pwd

from hicache.fs import DirEntry, FileStat, FileSystem

__all__ = ["FileTrust"]

logger = logging.getLogger("hicache.file_store")  # the store's log: its collaborators speak for it


class FileTrust:
    """The S1 and S3 tests of one store: this user (``fs.euid()``) and the shared group (None: none).

    ``file_mode`` and ``dir_mode`` are the modes the store creates files and directories with: private,
    or shared with the group.
    """

    __slots__ = ("__weakref__", "dir_mode", "euid", "file_mode", "fs", "group")

    def __init__(self, fs: FileSystem, group: int | None) -> None:
        self.fs = fs
        self.euid = fs.euid()
        self.group = group
        self.file_mode = 0o660 if group is not None else 0o600
        self.dir_mode = 0o2770 if group is not None else 0o700

    def is_page(self, node: FileStat | DirEntry) -> bool:
        """S3: tell whether ``node`` (a stat or a listing entry) is a regular file of this user or group."""
        return node.kind == "file" and (
            node.uid == self.euid or (self.group is not None and node.gid == self.group)
        )

    def are_pages(self, nodes: list[DirEntry]) -> list[bool]:
        """Return ``is_page`` of each of ``nodes``, in order: S3's one test, for a listing at a time.

        The calls are made from C (``map``), with no step of the caller's loop per node.
        """
        return list(map(self.is_page, nodes))

    def subdir_problem(self, node: FileStat | DirEntry) -> str | None:
        """Say why a fanout subdirectory is not trusted, or None (F1-fanout, S1).

        It must be a directory (not a symlink) of this user, or of the shared group, and writable by no
        one else.
        """
        group = self.group
        kind, uid, gid, mode = node.kind, node.uid, node.gid, node.mode
        if kind != "dir":
            return f"is a {kind}"
        if uid != self.euid and (group is None or gid != group):
            return f"belongs to uid {uid}"
        if mode & 0o002:
            return f"is writable by every user (mode {mode:04o})"
        if mode & 0o020 and (group is None or gid != group):
            return f"is writable by group {gid} (mode {mode:04o})"
        return None

    def trusted_subdir(self, parent: str, entry: DirEntry) -> bool:
        """Tell whether the fanout subdirectory ``entry`` of ``parent`` is trusted; log why not (S1)."""
        problem = self.subdir_problem(entry)
        if problem is not None:
            logger.warning(
                "file store: fanout subdirectory %r %s: its pages are skipped",
                os.path.join(parent, entry.name),
                problem,
            )
        return problem is None

    def trusted_directory(self, directory: str) -> str:
        """S1: resolve ``directory`` once, create it private when missing, refuse it unless it is ours."""
        fs = self.fs
        resolved = fs.resolve(directory)
        st = fs.mkdir(resolved, self.dir_mode, self.group)
        shown_dir = resolved if resolved == directory else f"{resolved} (from {directory})"
        if st.kind != "dir":
            raise NotADirectoryError(
                f"storage directory {shown_dir} is a {st.kind}, not a directory: choose another storage_dir"
                " (HICACHE_FILE_STORAGE_DIR)"
            )
        owner = _user_name(st.uid)
        where = f"storage directory {shown_dir} (owner {owner}, mode {st.mode:04o})"
        if st.uid not in (self.euid, 0):
            raise PermissionError(
                f"{where} belongs to another user, who could read or plant pages: use a directory of your"
                f" own (storage_dir or HICACHE_FILE_STORAGE_DIR), or remove it and let the store create it"
            )
        if st.mode & 0o002:
            raise PermissionError(
                f"{where} is writable by every user, who could plant or replace pages: run"
                f" `chmod o-w {resolved}` (or `chmod 700`), or use another storage_dir"
            )
        if st.mode & 0o020 and (self.group is None or st.gid != self.group):
            fix = (
                f"configure shared_group (HICACHE_FILE_SHARED_GROUP) to trust group {_group_name(st.gid)}"
                if self.group is None
                else f"its group is {_group_name(st.gid)}, not the shared group {_group_name(self.group)}"
            )
            raise PermissionError(
                f"{where} is writable by its group: run `chmod g-w {resolved}` (or `chmod 700`), or {fix}"
            )
        return resolved


def _user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _group_name(gid: int) -> str:
    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"
