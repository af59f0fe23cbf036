"""A disk cache for engine job results, so a tour step whose job ran before (or was shipped) is drawn at once.

An entry is keyed by the engine function's qualified name, its full inputs (canonical JSON of the frozen
arguments; a file argument by its content) and the code/data version (a hash of every engine source file
and data asset), so a changed knob, input file or engine computes afresh. Results are stored as JSON
(:mod:`engines.core.codec`, no pickle), gzip-compressed, one file per key, written atomically; a
corrupt, truncated, foreign or future-version entry is ignored (and removed from the user's folder) and
the job recomputes. The user's folder stays under a size bound (least recently used entries go first);
read-only folders (the cache shipped with the tours) are looked up after it. Deleting any of it is safe.
"""
from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import json
import logging
import os
import platform
import sys
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from engines.core import codec
from engines.core.errors import Cancelled
from engines.core.reading import read_bytes
from engines.core.writing import FileProblem, atomic_write_bytes

log = logging.getLogger("explorer")

FORMAT = 1                      # bump when the entry layout changes; newer entries are ignored
KIND = "explorer-job-cache"
SUFFIX = ".json.gz"
MAX_ENTRY_BYTES = 64 << 20      # compressed, on read
MAX_ENTRY_JSON = 512 << 20      # decompressed, on read (a gzip bomb stops here)
DEFAULT_LIMIT = 256 << 20       # the user's folder, in bytes
READY_ENTRIES = 8               # prefetched results kept decoded for their step (see ResultCache.run)
VERSION_FILE = "CODE_VERSION"   # a frozen bundle has no engine sources: the build records their hash here

# data the engines read; the lesson texts, tours, icons, fonts and the shipped cache itself are not inputs
_NOT_DATA = {"tours", "lessons", "icons", "fonts", "tour_cache"}


class NotCacheable(ValueError):
    """An argument or result the codec cannot write exactly; the job just runs uncached."""


@dataclass(frozen=True)
class EngineCall:
    """One engine function and its inputs: a job's whole work, and the cache's key.

    Calling it runs ``fn(*args, progress, cancelled, **kwargs)`` (without the two callbacks when
    ``takes_progress`` is false), so it is itself a job function for ``Panel.jobs(name).run``.
    """

    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    takes_progress: bool = True

    def __call__(self, progress: Callable[[float, str], None], cancelled: Callable[[], bool]) -> Any:
        if self.takes_progress:
            return self.fn(*self.args, progress, cancelled, **self.kwargs)
        return self.fn(*self.args, **self.kwargs)

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    def key(self, version: str) -> str:
        """The canonical text of function, inputs and code version; raises :class:`NotCacheable`."""
        try:
            inputs = codec.encode({"args": list(self.args), "kwargs": dict(self.kwargs)}, files=True)
        except codec.CodecError as exc:
            raise NotCacheable(str(exc)) from None
        return json.dumps({"fn": self.name, "inputs": inputs, "version": version},
                          sort_keys=True, separators=(",", ":"), allow_nan=True)


def resolve_function(name: str) -> Callable[..., Any]:
    """An engine function from its dotted name (``engines.*`` only: an entry names no other code)."""
    import importlib

    module, _, qualname = name.rpartition(".")
    if not module.startswith(codec.MODULE_PREFIX):
        raise NotCacheable(f"{name}: only engine functions are cached")
    while True:             # the module is the longest importable prefix (a qualname may hold dots)
        try:
            obj: Any = importlib.import_module(module)
            break
        except ImportError:
            module, _, head = module.rpartition(".")
            qualname = f"{head}.{qualname}"
            if not module.startswith(codec.MODULE_PREFIX):
                raise NotCacheable(f"{name}: no such engine function") from None
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def measured_fields(fn: Callable[..., Any]) -> frozenset[str]:
    """Result fields ``fn`` measures with a clock (its ``measured_fields``): they differ run to run."""
    return frozenset(getattr(fn, "measured_fields", ()))


REPRODUCIBLE_REL = 1e-6   # the float agreement an engine result has on another CPU, unless it says otherwise


def reproduces(fn: Callable[..., Any], stored: Any, fresh: Any) -> bool:
    """Whether ``fresh`` (computed now) agrees with ``stored`` (computed elsewhere) as closely as ``fn``
    can reproduce itself on another CPU. Clock measurements (``measured_fields``) and hashes of float
    bits (``fn.platform_fields``) are left out; floats agree within ``fn.reproducible_rel``. Float32
    kernels round differently on different CPUs (MKL's and oneDNN's code paths), so a float32 training
    run or a quantizer's rounding decisions reproduce to a few parts in 10⁶ or 10³, not bit for bit."""
    from engines.core import codec

    ignore = measured_fields(fn) | frozenset(getattr(fn, "platform_fields", ()))
    return codec.close(stored, fresh, ignore=ignore, rel=getattr(fn, "reproducible_rel", REPRODUCIBLE_REL))


def engine_call(fn: Callable[..., Any], *args: Any, takes_progress: bool = True, **kwargs: Any) -> EngineCall:
    """``EngineCall(fn, args, kwargs)``: how a panel writes a cacheable job."""
    return EngineCall(fn, tuple(args), dict(kwargs), takes_progress)


def _hash_tree(h: "hashlib._Hash", root: Path, files: list[Path]) -> None:
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")


def source_version(engines_dir: str | os.PathLike, assets_dir: str | os.PathLike) -> str:
    """Hash of every engine source file and every data asset: any edit to either is a new version."""
    engines_dir, assets_dir = Path(engines_dir), Path(assets_dir)
    h = hashlib.sha256(b"explorer-engines\0")
    _hash_tree(h, engines_dir, [p for p in engines_dir.rglob("*.py") if "__pycache__" not in p.parts])
    data = [p for p in assets_dir.rglob("*") if p.is_file() and p.relative_to(assets_dir).parts[0] not in _NOT_DATA
            and "__pycache__" not in p.parts]
    _hash_tree(h, assets_dir, data)
    return h.hexdigest()[:32]


_version: str | None = None
_version_lock = threading.Lock()


def code_version() -> str:
    """This program's engine/data version: hashed from the sources, or in a frozen bundle (no sources)
    read from the ``CODE_VERSION`` file the build wrote beside the shipped cache."""
    global _version
    with _version_lock:
        if _version is None:
            from engines.core.assets import asset_path

            engines_dir = Path(__file__).resolve().parent.parent
            if any(engines_dir.glob("core/*.py")):
                _version = source_version(engines_dir, asset_path("tour_cache").parent)
            else:
                try:
                    _version = asset_path("tour_cache", VERSION_FILE).read_text(encoding="ascii").strip()
                except OSError:
                    _version = "unknown-" + hashlib.sha256(sys.executable.encode()).hexdigest()[:8]
        return _version


@dataclass(frozen=True)
class Origin:
    """Where and when a cached result was computed (shown in small text under a view drawn from it)."""

    at: str          # ISO 8601, UTC
    host: str
    shipped: bool    # found in a read-only folder (the tours' shipped cache)

    def _when(self, fmt: str) -> str:
        try:
            return _dt.datetime.fromisoformat(self.at).strftime(fmt)
        except ValueError:
            return self.at

    def describe(self) -> str:
        where = "shipped with the app, " if self.shipped else ""
        return f"From the cache: {where}computed {self._when('%d %b %Y %H:%M UTC')} on {self.host}"

    def short(self) -> str:
        """Few enough characters for a task bar's label (the full text is its tooltip)."""
        host = self.host if len(self.host) <= 16 else self.host[:15] + "…"
        return f"Cached: {self._when('%d %b %Y')}, {host}"


class ResultCache:
    """Entries in ``folder`` (read-write, bounded by ``limit`` bytes) and ``shipped`` folders (read-only)."""

    def __init__(self, folder: Path | None, limit: int = DEFAULT_LIMIT, shipped: tuple[Path, ...] = (),
                 version: Callable[[], str] = code_version) -> None:
        self.folder, self.limit, self.shipped, self._version = folder, int(limit), tuple(shipped), version
        self._lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}
        self._ready: OrderedDict[str, tuple[Any, Origin]] = OrderedDict()   # see ``run(hand_over=True)``

    def file_for(self, key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest() + SUFFIX

    def key_of(self, call: EngineCall) -> str | None:
        try:
            return call.key(self._version())
        except NotCacheable as exc:
            log.debug("job %s not cached: %s", call.name, exc)
            return None

    # --- reading -----------------------------------------------------------------------------
    def get(self, call: EngineCall) -> tuple[Any, Origin] | None:
        """The stored result for ``call`` and where it came from, or None (a bad entry counts as none)."""
        key = self.key_of(call)
        if key is None:
            return None
        with self._lock:
            ready = self._ready.pop(key, None)
        if ready is not None:
            return ready
        name = self.file_for(key)
        places = ([(self.folder, False)] if self.folder is not None else []) + [(s, True) for s in self.shipped]
        for folder, shipped in places:
            path = folder / name
            if not path.is_file():
                continue
            try:
                found = self._read(path, key, shipped)
            except (FileProblem, OSError, ValueError, KeyError, TypeError, EOFError, zlib.error) as exc:
                log.warning("ignoring job cache entry %s: %s", path.name, exc)
                if not shipped:
                    self._remove(path)
                continue
            if not shipped:
                try:
                    os.utime(path)           # recently used: evicted last
                except OSError:
                    pass
            return found
        return None

    def _read(self, path: Path, key: str, shipped: bool) -> tuple[Any, Origin]:
        raw = read_bytes(path, MAX_ENTRY_BYTES)
        inflate = zlib.decompressobj(wbits=31)        # gzip framing
        text = inflate.decompress(raw, MAX_ENTRY_JSON)
        if inflate.unconsumed_tail or not inflate.eof:
            raise ValueError("truncated or larger than the limit")
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            raise ValueError("not a job cache entry")
        if doc.get("format") != FORMAT:
            raise ValueError(f"format {doc.get('format')!r}, this program reads {FORMAT}")
        if doc.get("key") != key:
            raise ValueError("written for other inputs")
        origin = Origin(at=str(doc["computed"]["at"]), host=str(doc["computed"]["host"]), shipped=shipped)
        return codec.decode(doc["result"]), origin

    # --- writing -----------------------------------------------------------------------------
    def put(self, call: EngineCall, result: Any) -> Path | None:
        """Store ``result`` for ``call``; None when it cannot be stored exactly (nothing is written)."""
        if self.folder is None:
            return None
        key = self.key_of(call)
        if key is None:
            return None
        try:
            tree = codec.encode(result)
        except codec.CodecError as exc:
            log.debug("result of %s not cached: %s", call.name, exc)
            return None
        doc = {"kind": KIND, "format": FORMAT, "key": key, "function": call.name,
               "takes_progress": call.takes_progress,
               "computed": {"at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                            "host": platform.node() or "this computer"},
               "result": tree}
        data = gzip.compress(json.dumps(doc, separators=(",", ":"), allow_nan=True).encode(), 6, mtime=0)
        if len(data) > min(MAX_ENTRY_BYTES, self.limit):
            return None
        path = self.folder / self.file_for(key)
        try:
            atomic_write_bytes(path, data, make_parents=True)
        except OSError as exc:
            log.warning("job cache not written: %s", exc)
            return None
        self.evict()
        return path

    def entries(self) -> list[Path]:
        if self.folder is None or not self.folder.is_dir():
            return []
        return [p for p in self.folder.iterdir() if p.name.endswith(SUFFIX) and p.is_file()]

    def size(self) -> int:
        total = 0
        for p in self.entries():
            try:
                total += p.stat().st_size
            except OSError:
                pass
        return total

    def evict(self) -> None:
        """Remove least recently used entries until the folder is within its bound."""
        with self._lock:
            stats = []
            for p in self.entries():
                try:
                    st = p.stat()
                except OSError:
                    continue
                stats.append((st.st_mtime, st.st_size, p))
            total = sum(s for _, s, _ in stats)
            for _, size, p in sorted(stats, key=lambda t: (t[0], t[2].name)):
                if total <= self.limit:
                    break
                self._remove(p)
                total -= size

    def clear(self) -> None:
        with self._lock:
            self._ready.clear()
        for p in self.entries():
            self._remove(p)

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass

    def stored(self, path: Path) -> tuple[EngineCall, Any]:
        """The call an entry was written for (rebuilt from its key) and its result: a test recomputes a
        sample of them, so a cache never shows what the engine would not give today."""
        raw = zlib.decompress(read_bytes(path, MAX_ENTRY_BYTES), wbits=31)
        doc = json.loads(raw)
        key = json.loads(doc["key"])
        inputs = codec.decode(key["inputs"])
        call = EngineCall(resolve_function(key["fn"]), tuple(inputs["args"]), dict(inputs["kwargs"]),
                          bool(doc.get("takes_progress", True)))
        return call, codec.decode(doc["result"])

    # --- running -----------------------------------------------------------------------------
    def run(self, call: EngineCall, progress: Callable[[float, str], None],
            cancelled: Callable[[], bool], hand_over: bool = False) -> tuple[Any, Origin | None]:
        """The cached result (and its origin), or the computed one (stored, origin None). A call another
        thread is already computing (a prefetch) is waited for rather than computed twice.

        ``hand_over`` (the prefetch): a stored result, once read, is also kept decoded for the next
        ``get`` of the same call, which takes it (once: no two callers share an object). Reading and
        decoding an entry is milliseconds of Python in a worker, time the GUI thread lost to it while
        it drew the step that asked; read while the step before was shown, it costs that step nothing."""
        key = self.key_of(call)
        while True:
            hit = self.get(call) if key is not None else None
            if hit is not None:
                if hand_over:
                    with self._lock:
                        self._ready[key] = hit
                        while len(self._ready) > READY_ENTRIES:
                            self._ready.popitem(last=False)
                return hit
            with self._lock:
                busy = self._inflight.get(key) if key is not None else None
                if busy is None and key is not None:
                    mine = self._inflight[key] = threading.Event()
            if busy is None:
                break
            while not busy.wait(0.05):           # the other thread stores it (or fails: then compute here)
                if cancelled():
                    raise Cancelled()
                progress(0.0, "waiting for the background computation of this step")
            if key is None:
                break
        try:
            result = call(progress, cancelled)
            if not cancelled():
                self.put(call, result)
            return result, None
        finally:
            if key is not None:
                with self._lock:
                    self._inflight.pop(key, None)
                mine.set()
