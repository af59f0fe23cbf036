"""The command a generating script ran with, recorded inside the file it writes.

Every script that writes a measured or generated file under ``assets/`` stores :func:`record` in it
(a JSON field, or safetensors metadata), so the file says how to make it again, and
``tests/engines/test_shipped_reproducible.py`` re-runs a sample of it from that record.
The command lists every option with its effective value (defaults included), so a later change of a
default does not change what a recorded command means. See assets/MEASURED.md.
"""
from __future__ import annotations

import argparse
import platform
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _text(value: object) -> str:
    """A value as typed on the command line; paths inside the repository relative to its root."""
    if isinstance(value, Path) or (isinstance(value, str) and value.startswith(str(ROOT) + "/")):
        path = Path(value).resolve()
        return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return str(value)


def argv_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """Every option of ``parser`` spelled out with its value in ``args``: the full, explicit argv."""
    out: list[str] = []
    positional: list[str] = []
    for action in parser._actions:       # argparse has no public iterator over its actions
        if isinstance(action, argparse._HelpAction):
            continue
        value = getattr(args, action.dest)
        if not action.option_strings:
            positional += [_text(v) for v in (value if isinstance(value, list) else [value])]
        elif isinstance(action, argparse._StoreTrueAction):
            out += [action.option_strings[-1]] if value else []
        elif isinstance(action, argparse._AppendAction):
            for v in value or ():
                out += [action.option_strings[-1], _text(v)]
        elif value is not None:
            out += [action.option_strings[-1], _text(value)]
    return out + positional


def record(script: str, parser: argparse.ArgumentParser, args: argparse.Namespace, **settings) -> dict:
    """What to store in the written file: the command, its argv, and what the numbers depend on
    beyond it (torch threads and version where torch is loaded, Python, plus ``settings``)."""
    argv = argv_of(parser, args)
    rec: dict = {"script": script, "argv": argv, "command": shlex.join(["python", script, *argv]),
                 "python": platform.python_version()}
    torch = sys.modules.get("torch")
    if torch is not None:
        rec["torch"] = torch.__version__
        rec["threads"] = torch.get_num_threads()
    rec.update(settings)
    return rec


def parse_recorded(parser: argparse.ArgumentParser, rec: dict) -> argparse.Namespace:
    """The settings a recorded command ran with (for re-running a sample of it)."""
    return parser.parse_args(list(rec["argv"]))
