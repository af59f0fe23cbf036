"""Every reader of a user's file reads at most its limit plus one byte, whatever ``stat`` says, and
refuses what is not a regular file before reading (a FIFO would block open() forever)."""
from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from _readers import OWN_ERRORS, PATH_READERS
from engines.core import reading

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="devices and FIFOs are POSIX here")


def _run(reader, path, seconds: float = 10.0) -> BaseException | None:
    """``reader(path)`` in a daemon thread: what it raised, or a TimeoutError if it hung."""
    out: list[BaseException | None] = []

    def go():
        try:
            reader(path)
            out.append(None)
        except BaseException as exc:   # noqa: BLE001 — the test inspects whatever came out
            out.append(exc)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    return out[0] if out else TimeoutError(f"{path} blocked for {seconds} s")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("name", sorted(PATH_READERS))
def test_a_device_is_refused_not_read_to_the_end(name, device, tmp_path):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    link = tmp_path / "innocent.json"
    link.symlink_to(device)
    for path in (device, link):
        err = _run(PATH_READERS[name], path)
        assert isinstance(err, OWN_ERRORS), repr(err)
        assert "not a regular file" in str(err), str(err)


@pytest.mark.parametrize("name", sorted(PATH_READERS))
def test_a_named_pipe_is_refused_at_once(name, tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    err = _run(PATH_READERS[name], fifo)
    assert isinstance(err, OWN_ERRORS), repr(err)
    assert "named pipe" in str(err) and time.perf_counter() - t0 < 5


@pytest.mark.parametrize("name", sorted(PATH_READERS))
def test_a_folder_is_refused(name, tmp_path):
    err = _run(PATH_READERS[name], tmp_path)
    assert isinstance(err, OWN_ERRORS) and "folder" in str(err), repr(err)


def test_the_reader_stops_one_byte_past_the_limit_whatever_stat_says(tmp_path, monkeypatch):
    """A file whose size stat cannot know (here: one that grows as it is read) is cut at limit + 1."""
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 5000)
    asked: list[int] = []
    real_read = os.read

    def counting_read(fd, n):
        asked.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(reading.os, "read", counting_read)
    with pytest.raises(reading.FileRefused, match="larger than the 1,000 bytes"):
        reading.read_bytes(big, 1000)
    assert sum(asked) == 1001
    assert reading.read_bytes(big, 5000) == b"x" * 5000     # exactly the limit is fine


def test_a_large_sparse_file_is_refused_quickly(tmp_path):
    big = tmp_path / "huge.yaml"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)      # sparse: no disk used
    for name in ("dump", "sbom", "price"):
        t0 = time.perf_counter()
        err = _run(PATH_READERS[name], big)
        assert isinstance(err, OWN_ERRORS) and "larger than" in str(err), repr(err)
        assert time.perf_counter() - t0 < 2
