"""Atomic file writes and size-limited reads: a crash mid-save never destroys the old file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

MAX_SCENARIO_BYTES = 1_000_000  # a scenario is a few KB; refuse anything absurd before reading it


class FileProblem(ValueError):
    """A file could not be read or written; the message says what and why."""


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write to a temp file in the same folder, fsync, then rename over the target."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            # mkstemp makes the file private (0600); a saved file gets the mode it had, or the
            # umask's default, as open() would give it
            os.fchmod(fh.fileno(), target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_UMASK)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def read_text_limited(path: str | os.PathLike, limit: int = MAX_SCENARIO_BYTES) -> str:
    """Read a small UTF-8 text file, explaining any failure instead of raising OSError/UnicodeError."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise FileProblem(f"cannot open {p}: {exc.strerror or exc}") from None
    if size > limit:
        raise FileProblem(f"{p.name} is {size:,} bytes; a scenario file is at most {limit:,} bytes")
    try:
        return p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise FileProblem(f"{p.name} is not UTF-8 text (is it a binary file?)") from None
    except OSError as exc:
        raise FileProblem(f"cannot read {p}: {exc.strerror or exc}") from None
