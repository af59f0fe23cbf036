"""Atomic saves: a temp file in the same folder, fsync, then a rename over the target, so a crash
mid-save leaves the old file whole. Used by the shell and by engines that write result files."""
from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from pathlib import Path

TEMP_PATTERN = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
"""The names :func:`atomic_write_bytes` gives its temp files (mkstemp's eight characters between)."""


class FileProblem(ValueError):
    """A file could not be read or written; the message says what and why."""


class SaveProblem(FileProblem, OSError):
    """A save that did not happen; also an ``OSError``, so callers that catch write errors still do.
    The message names the user's file, never the hidden temp file."""


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _save_target(path: str | os.PathLike, make_parents: bool) -> Path:
    """The file a save really replaces: a symlink's target (the link stays a link); refusals named."""
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    name = Path(path).name or str(path)
    if not target.parent.is_dir():
        if not make_parents:
            raise SaveProblem(f"cannot save {name}: the folder {target.parent} does not exist")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SaveProblem(f"cannot save {name}: cannot make the folder {target.parent} "
                              f"({exc.strerror or exc})") from None
    try:
        st = target.stat()
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise SaveProblem(f"cannot save {name}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SaveProblem(f"cannot save {name}: it is not a regular file")
    if not os.access(target, os.W_OK) or not st.st_mode & 0o222:   # root passes os.access; the mode still says no
        raise SaveProblem(f"cannot save {name}: the file is read-only")
    return target


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, make_parents: bool = False) -> None:
    """Write to a temp file in the same folder, fsync, then rename over the target.

    A missing folder is refused unless ``make_parents`` (the app's own configuration folder); a
    read-only file is refused, not replaced; a symlink's target is written and the link kept. Errors
    are :class:`SaveProblem` naming ``path``.
    """
    target = _save_target(path, make_parents)
    name = Path(path).name or str(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise SaveProblem(f"cannot save {name}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            # mkstemp makes the file private (0600); a saved file gets the mode it had, or the
            # umask's default, as open() would give it
            os.fchmod(fh.fileno(), target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_UMASK)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, SaveProblem):
            raise SaveProblem(f"cannot save {name}: {exc.strerror or exc}") from None
        raise


def atomic_write_text(path: str | os.PathLike, text: str, *, make_parents: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), make_parents=make_parents)


def remove_stale_temps(folder: str | os.PathLike, min_age_s: float = 10.0) -> list[Path]:
    """Delete temp files of :func:`atomic_write_bytes`'s own pattern that a killed save left in ``folder``
    (the app's configuration folder, never a user's), older than ``min_age_s``; returns what went."""
    gone: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return gone
    now = time.time()
    for entry in entries:
        if not TEMP_PATTERN.match(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and now - entry.stat(follow_symlinks=False).st_mtime >= min_age_s:
                os.unlink(entry.path)
                gone.append(Path(entry.path))
        except OSError:
            continue
    return gone
