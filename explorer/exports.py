"""Exports of a panel: PNG (2× scale), SVG, CSV/JSON of the engine result, GIF of the timeline.

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
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRectF, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication, QWidget

from explorer.files import atomic_write_bytes, atomic_write_text


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


def export_png(widget: QWidget, path: str | Path, scale: float = 2.0) -> Path:
    atomic_write_bytes(path, _png_bytes(render_image(widget, scale)))
    return Path(path)


def export_svg(widget: QWidget, path: str | Path, title: str = "") -> Path:
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


def export_csv(rows: list[dict], path: str | Path) -> Path:
    rows = [to_jsonable(r) for r in rows]
    columns: list[str] = []
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for r in rows:
        writer.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})
    atomic_write_text(path, out.getvalue())
    return Path(path)


def export_gif(panel, timeline, path: str | Path, scale: float = 1.0, max_frames: int = 300) -> Path:
    """Walk the shared timeline frame by frame (the same path as stepping) and write an animated GIF."""
    from PIL import Image

    if timeline.spec is None:
        raise ValueError("this panel has no animation to export")
    n = timeline.n_frames
    stride = max(1, math.ceil(n / max_frames))
    start = timeline.position
    frames = []
    try:
        for i in range(0, n, stride):
            timeline.set_position(i)
            img = render_image(panel.export_widget(), scale)
            frames.append(Image.open(io.BytesIO(_png_bytes(img))).convert("RGB").quantize(colors=128))
    finally:
        timeline.set_position(start)
    duration = int(1000 * stride / max(timeline.spec.fps, 0.1))
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=duration, loop=0)
    atomic_write_bytes(path, out.getvalue())
    return Path(path)
