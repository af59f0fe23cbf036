"""The self-test passes with the network blocked: any connect / DNS lookup raises and is logged.

A sitecustomize.py on PYTHONPATH patches the socket module in the child before any app code runs;
loopback and Unix sockets (Qt's offscreen plugin, multiprocessing) stay allowed."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SITECUSTOMIZE = r'''
import os, socket

LOG = os.environ["NO_NETWORK_LOG"]


def _refuse(what):
    with open(LOG, "a", encoding="utf-8") as fh:
        fh.write(what + "\n")
    raise OSError(101, "network blocked by test_no_network: " + what)


def _local(address):
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX path
    host = address[0] if address else ""
    return host in ("127.0.0.1", "::1", "localhost", "")


_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def connect(self, address):
    if not _local(address):
        _refuse(f"connect {address!r}")
    return _connect(self, address)


def connect_ex(self, address):
    if not _local(address):
        _refuse(f"connect_ex {address!r}")
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    if host not in (None, "localhost", "127.0.0.1", "::1"):
        _refuse(f"getaddrinfo {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


_getaddrinfo = socket.getaddrinfo
socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
socket.create_connection = lambda address, *a, **k: _refuse(f"create_connection {address!r}")
'''


def test_blocker_really_blocks(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", NO_NETWORK_LOG=str(tmp_path / "log"))
    code = "import urllib.request\ntry:\n urllib.request.urlopen('http://example.com', timeout=2)\nexcept OSError as e:\n print('blocked', e)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "blocked" in out.stdout, out.stdout + out.stderr
    assert "example.com" in (tmp_path / "log").read_text()


@pytest.mark.slow
def test_selftest_passes_with_sockets_blocked(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "attempts.log"
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", NO_NETWORK_LOG=str(log),
               QT_QPA_PLATFORM="offscreen", EXPLORER_CONFIG_DIR=str(tmp_path / "config"),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = subprocess.run([sys.executable, "-m", "explorer", "--selftest", "--device", "cpu"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    attempts = log.read_text() if log.exists() else ""
    print(out.stdout[-3000:])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-5000:]
    assert "SELFTEST OK" in out.stdout
    # the app must not even try: an attempt that happened to be caught is still a finding
    assert attempts == "", f"network attempts during the self-test:\n{attempts}"
