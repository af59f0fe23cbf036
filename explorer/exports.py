"""Exports of a panel: PNG (2× scale), SVG, CSV/JSON of the engine result, GIF of the timeline
(at 1×, at most GIF_MAX_FRAMES frames, with progress and cancel: AnimationExport), and the documents
a panel writes (``save_document``: one save dialog, one atomic write, errors shown inline).

CSV and JSON are written from the engine result (``panel.result()`` / ``panel.table()``), never
scraped from the plots. All writes are atomic.
"""
from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import enum
import io
import json
import math
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import (QBuffer, QByteArray, QCoreApplication, QElapsedTimer, QEventLoop, QIODevice, QObject,
                            QPoint, QRectF, QSize, QThreadPool, QTimer, Signal)
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from explorer.files import FileProblem, atomic_write_bytes, atomic_write_text


def to_jsonable(obj):
    """Dataclasses, numpy arrays/scalars, torch tensors, sets, dates and enums → plain JSON types."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((to_jsonable(v) for v in obj), key=str)
    if isinstance(obj, (_dt.datetime, _dt.date)):
        return obj.isoformat()
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    tolist = getattr(obj, "tolist", None)  # numpy arrays and scalars, torch tensors
    if callable(tolist):
        if hasattr(obj, "detach"):
            obj = obj.detach().cpu()
            tolist = obj.tolist
        return to_jsonable(tolist())
    return str(obj)


def render_image(widget: QWidget, scale: float = 2.0) -> QImage:
    """Render a widget at ``scale`` × its logical size (fixed, independent of the screen's DPI)."""
    QApplication.processEvents()
    QApplication.processEvents()
    size = widget.size()
    if size.width() < 2 or size.height() < 2:
        widget.resize(QSize(1200, 800))
        size = widget.size()
    image = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(widget.palette().window().color())
    widget.render(image)
    return image


def _png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    if not image.save(buf, "PNG"):
        raise OSError("Qt could not encode the PNG")
    buf.close()
    return bytes(data)


STATE_KEY = "explorer-view"
"""Where an exported figure keeps the view it was made from (PNG text chunk, SVG description, GIF
comment, a first CSV comment line; JSON has it in ``meta.state``): open it with File ▸ Open view."""


def export_png(widget: QWidget, path: str | Path, scale: float = 2.0, state: str | None = None) -> Path:
    image = render_image(widget, scale)
    if state:
        image.setText(STATE_KEY, state)
    atomic_write_bytes(path, _png_bytes(image))
    return Path(path)


def export_svg(widget: QWidget, path: str | Path, title: str = "", state: str | None = None) -> Path:
    from PySide6.QtSvg import QSvgGenerator

    QApplication.processEvents()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(widget.size())
    gen.setViewBox(QRectF(0, 0, widget.width(), widget.height()))
    gen.setResolution(96)  # fixed, not the screen's
    gen.setTitle(title or widget.accessibleName() or "AI Systems Explorer")
    if state:
        gen.setDescription(f"{STATE_KEY}: {state}")
    painter = QPainter(gen)
    try:
        widget.render(painter, QPoint(0, 0))
    finally:
        painter.end()
    buf.close()
    atomic_write_bytes(path, bytes(data))
    return Path(path)


def export_json(result: object, path: str | Path, meta: dict | None = None) -> Path:
    doc = {"meta": meta or {}, "result": to_jsonable(result)}
    atomic_write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return Path(path)


def export_csv(rows: list[dict], path: str | Path, state: str | None = None) -> Path:
    """Rows as CSV; with ``state`` the first line is ``# explorer-view: {json}`` (read with comment='#')."""
    rows = [to_jsonable(r) for r in rows]
    columns: list[str] = []
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    out = io.StringIO()
    if state:
        out.write(f"# {STATE_KEY}: {' '.join(state.split())}\n")
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for r in rows:
        writer.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})
    atomic_write_text(path, out.getvalue())
    return Path(path)


# --- documents a panel writes (decision record, checklists, audit record, price file) ----------------
def ask_save_path(parent: QWidget | None, title: str, suggested: str, filters: str) -> str:
    """The save dialog every document export opens; "" when the user cancels (tests replace it)."""
    name, _filter = QFileDialog.getSaveFileName(parent, title, suggested, filters)
    return name


def write_document(path: str | Path, content: str | bytes) -> Path:
    """Write a document atomically (an interrupted or failed write leaves the old file whole). A
    failure is a :class:`FileProblem` naming the file asked for, never the hidden temporary file."""
    target = Path(path)
    try:
        if isinstance(content, bytes):
            atomic_write_bytes(target, content)
        else:
            atomic_write_text(target, content)
    except OSError as exc:
        raise FileProblem(f"could not write {target}: {exc.strerror or exc}") from None
    return target


def save_document(parent: QWidget | None, title: str, suggested: str, filters: str,
                  write: Callable[[Path], object], show_error: Callable[[str | None], None]) -> Path | None:
    """The one path from an "Export …" button to a file: ask where, call ``write(path)`` (which writes
    with :func:`write_document`) and show a failure inline with ``show_error``, naming the file the
    user chose. Returns the path written, or None (cancelled or failed)."""
    name = ask_save_path(parent, title, suggested, filters)
    if not name:
        return None
    try:
        write(Path(name))
    except FileProblem as exc:
        show_error(str(exc))
        return None
    except (OSError, ValueError) as exc:     # an engine's refusal (ValidationError) or a stray OS error
        show_error(f"could not write {name}: {getattr(exc, 'strerror', None) or exc}")
        return None
    show_error(None)
    return Path(name)


# --- animation (GIF) -------------------------------------------------------------------------
# A timeline of a few hundred frames exported frame by frame at full size took ~70 s (every frame
# went through a PNG round trip and a median-cut quantisation). An exported GIF needs no more than
# ~120 frames to show the animation; the timeline is sampled evenly, keeping its first and last frame.
GIF_MAX_FRAMES = 120
GIF_COLORS = 256


class ExportCancelled(Exception):
    """The user cancelled an export; nothing was written."""


def sample_frames(n_frames: int, max_frames: int = GIF_MAX_FRAMES) -> list[int]:
    """At most ``max_frames`` timeline indices, evenly spaced, always the first and the last."""
    if n_frames <= 0:
        return []
    k = max(1, min(n_frames, int(max_frames)))
    if k == 1:
        return [0]
    if k == n_frames:
        return list(range(n_frames))
    return sorted({round(i * (n_frames - 1) / (k - 1)) for i in range(k)})


def gif_frame_ms(n_frames: int, n_exported: int, fps: float) -> int:
    """How long each exported frame shows, so the GIF lasts as long as the timeline does at ``fps``
    (GIF delays are whole centiseconds; viewers play delays under 20 ms slowly)."""
    ms = 1000.0 * n_frames / max(1, n_exported) / max(fps, 0.1)
    return max(20, int(round(ms / 10.0)) * 10)


def grab_frame(widget: QWidget, scale: float = 1.0):
    """One GIF frame of ``widget`` as it is drawn now: a palette image (Pillow "P"). GUI thread only.

    The widget is rendered straight into an RGB image and quantised with Pillow's fast octree
    (about 15 ms for a panel), not saved as PNG and decoded again."""
    from PIL import Image

    image = render_image(widget, scale).convertToFormat(QImage.Format_RGB888)
    rgb = Image.frombuffer("RGB", (image.width(), image.height()), bytes(image.constBits()), "raw", "RGB",
                           image.bytesPerLine(), 1)
    return rgb.quantize(colors=GIF_COLORS, method=Image.Quantize.FASTOCTREE)


def encode_gif(frames: list, duration_ms: int, state: str | None = None) -> bytes:
    """An animated, looping GIF of palette frames. Touches no widget: safe on a worker thread."""
    if not frames:
        raise ValueError("no frames to export")
    out = io.BytesIO()
    extra = {"comment": f"{STATE_KEY}: {' '.join(state.split())}".encode()} if state else {}
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=duration_ms, loop=0,
                   **extra)
    return out.getvalue()


def export_gif(panel, timeline, path: str | Path, scale: float = 1.0, max_frames: int = GIF_MAX_FRAMES,
               state: str | None = None) -> Path:
    """Walk the shared timeline (the same path as stepping) and write an animated GIF, blocking
    until it is written: the self-test's and tests' way to run an :class:`AnimationExport`."""
    job = AnimationExport(panel, timeline, path, scale, max_frames, state=state)
    job.start()
    return job.result()


class AnimationExport(QObject):
    """A GIF export of a panel's timeline driven by the event loop, with progress and cancel.

    Frames must be drawn from widgets on the GUI thread, so they are grabbed one per event-loop turn
    (the window stays responsive between frames); the GIF is then encoded on a worker thread and
    written atomically, only once every frame is in: a cancelled export leaves no file. The
    timeline goes back to the frame it was on as soon as the frames are grabbed (or on cancel).

    ``finished(outcome, detail)``: ("done", Path), ("cancelled", None) or ("failed", message)."""

    progressed = Signal(int, int)      # frame about to be grabbed (0-based), frames to export
    encoding = Signal()
    finished = Signal(str, object)

    def __init__(self, panel, timeline, path: str | Path, scale: float = 1.0,
                 max_frames: int = GIF_MAX_FRAMES, parent: QObject | None = None, state: str | None = None) -> None:
        super().__init__(parent)
        from explorer.tasks import TaskRunner

        if timeline.spec is None:
            raise ValueError("this panel has no animation to export")
        self.panel, self.timeline, self.path, self.scale = panel, timeline, Path(path), scale
        self.state = state
        self.timeline_frames = timeline.n_frames
        self.fps = timeline.spec.fps
        self.indices = sample_frames(self.timeline_frames, max_frames)
        self.start_position = timeline.position
        self.outcome: str | None = None     # "done", "cancelled" or "failed" once finished
        self.error: str | None = None
        self._frames: list = []
        self._next = 0
        self._cancel = False
        self._runner = TaskRunner(self)     # the encoder's worker
        self._runner.finished.connect(self._encoder_finished)

    @property
    def total(self) -> int:
        """How many frames the GIF will have."""
        return len(self.indices)

    @property
    def running(self) -> bool:
        return self.outcome is None

    def start(self) -> None:
        self.timeline.stop()
        QTimer.singleShot(0, self, self._step)

    def cancel(self) -> None:
        """Stop now: between frames while grabbing, or drop the encoder's result."""
        if self.outcome is not None:
            return
        self._cancel = True
        if self._runner.running:
            self._runner.cancel()      # → _encoder_finished("cancelled")

    def wait(self, timeout_ms: int = 600_000) -> bool:
        """Block (processing events) until finished; for tests, the self-test and the CLI."""
        timer = QElapsedTimer()
        timer.start()
        while self.outcome is None and timer.elapsed() < timeout_ms:
            QCoreApplication.processEvents(QEventLoop.AllEvents, 50)
            if self._runner.running:
                QThreadPool.globalInstance().waitForDone(10)
        return self.outcome is not None

    def result(self, timeout_ms: int = 600_000) -> Path:
        """Wait for the export; its path, or ExportCancelled / ValueError saying why there is none."""
        self.wait(timeout_ms)
        if self.outcome == "done":
            return self.path
        if self.outcome == "cancelled":
            raise ExportCancelled("export cancelled")
        raise ValueError(self.error or "the export did not finish")

    # --- internals ------------------------------------------------------------------------
    def _step(self) -> None:
        """Grab one frame, then yield to the event loop (which paints the progress, handles Cancel)."""
        if self.outcome is not None:
            return
        if self._cancel:
            self._finish("cancelled")
            return
        if self._next >= len(self.indices):
            self._encode()
            return
        k = self._next
        self.progressed.emit(k, len(self.indices))   # a modal progress dialog processes events here
        if self._cancel:
            self._finish("cancelled")
            return
        try:
            self.timeline.set_position(self.indices[k])
            self._frames.append(grab_frame(self.panel.export_widget(), self.scale))
        except Exception as exc:  # noqa: BLE001 (a widget gone with its window, a paint error)
            self._finish("failed", f"{type(exc).__name__}: {exc}")
            return
        self._next += 1
        QTimer.singleShot(0, self, self._step)

    def _encode(self) -> None:
        self._restore()
        self.progressed.emit(len(self.indices), len(self.indices))
        self.encoding.emit()
        if self._cancel or self.outcome is not None:
            if self.outcome is None:
                self._finish("cancelled")
            return
        frames = self._frames
        duration = gif_frame_ms(self.timeline_frames, len(frames), self.fps)
        state = self.state
        self._runner.run(lambda _progress, _cancelled: encode_gif(frames, duration, state), self._write,
                         label="Encoding GIF…", on_error=lambda text: None)

    def _write(self, data: bytes) -> None:
        try:
            atomic_write_bytes(self.path, data)
        except OSError as exc:
            self._finish("failed", f"could not write {self.path}: {exc.strerror or exc}")
            return
        self._finish("done", self.path)

    def _encoder_finished(self, how: str) -> None:
        if how == "cancelled":
            self._finish("cancelled")
        elif how == "failed":
            self._finish("failed", (self._runner.last_error or "encoding failed").splitlines()[0])
        # "done": _write (called right after this) finishes

    def _restore(self) -> None:
        try:
            self.timeline.set_position(self.start_position)
        except RuntimeError:   # the timeline went with its window
            pass

    def _finish(self, outcome: str, detail: object = None) -> None:
        if self.outcome is not None:
            return
        self._restore()
        self._frames = []
        self.outcome = outcome
        self.error = detail if outcome == "failed" else None
        self.finished.emit(outcome, detail)
