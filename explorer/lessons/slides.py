"""A tour as slides: a self-contained HTML deck (one 2× PNG per step, caption, source, speaker notes,
keyboard navigation, no network) or a PDF with one page per step (Qt's PDF writer)."""
from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument
from PySide6.QtWidgets import QApplication

from explorer.exports import _png_bytes, render_image
from explorer.files import atomic_write_bytes, atomic_write_text
from explorer.lessons.tour import Tour

SCALE = 2.0                      # device pixels per logical pixel in each step's picture


def step_images(win, tour: Tour, scale: float = SCALE, progress=None) -> list[QImage]:
    """Show each step in ``win`` and render its picture: the step's focused view, given the panel's
    room as presenter mode gives it, or the whole panel. The window is left on the last step."""
    images = []
    player = win.tour
    for i in range(len(tour.steps)):
        shown = player.go(i) if player.tour is tour else player.start(tour, i)
        if not shown:
            raise ValueError(f"tour {tour.lesson}, {player.error}")
        win.current_panel().settle()
        panel, step = win.current_panel(), tour.steps[i]
        target = panel.view_widget(step.focus) if step.focus else None
        player.marker.point_at(None)
        if target is not None and not player.fold.active:
            player.fold.around(target, panel)
        QApplication.processEvents()
        images.append(render_image(panel if target is not None else panel.export_widget(), scale))
        if not win.presenting:
            player.fold.restore()
        player.arrange()
        if progress is not None:
            progress(i + 1, len(tour.steps))
    return images


def html_deck(tour: Tour, images: list[QImage]) -> str:
    """The deck as one HTML document (images inline as data URLs)."""
    slides = []
    n = len(tour.steps)
    for i, (step, image) in enumerate(zip(tour.steps, images)):
        data = base64.b64encode(_png_bytes(image)).decode("ascii")
        w, h = int(image.width() / SCALE), int(image.height() / SCALE)
        notes = f"<aside class='notes'><b>Notes.</b> {escape(step.notes)}</aside>" if step.notes else ""
        claim = f"<p class='claim'>Shows: {escape(step.claim)}</p>" if step.claim else ""
        source = f"<p class='source'>Source: {escape(step.source)}</p>" if step.source else ""
        slides.append(
            f"<section class='slide' id='s{i + 1}'><header>{escape(tour.lesson)} · {escape(tour.title)}"
            f"<span>step {i + 1} of {n}</span></header>"
            f"<div class='pic'><img alt='{escape(step.caption, quote=True)}' width='{w}' height='{h}' "
            f"src='data:image/png;base64,{data}'></div>"
            f"<p class='caption'>{escape(step.caption)}</p>{source}{claim}{notes}</section>")
    return _HTML.format(title=escape(f"{tour.lesson} · {tour.title}"), slides="\n".join(slides))


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="generator" content="AI Systems Explorer">
<style>
 body {{ margin: 0; font-family: "DejaVu Sans", sans-serif; background: #fff; color: #000; }}
 .slide {{ display: none; box-sizing: border-box; height: 100vh; padding: 2vh 3vw;
          flex-direction: column; align-items: center; }}
 .slide.on {{ display: flex; }}
 header {{ width: 100%; display: flex; justify-content: space-between; color: #555; font-size: 2.2vh; }}
 .pic {{ flex: 1 1 auto; min-height: 0; width: 100%; display: flex; justify-content: center; margin: 1vh 0; }}
 .pic img {{ height: 100%; width: auto; max-width: 100%; object-fit: contain; }}
 .caption {{ font-size: 3.4vh; line-height: 1.3; max-width: 75em; margin: 0.5vh 0; }}
 .source, .claim {{ font-size: 2vh; color: #555; margin: 0.3vh 0; max-width: 90em; }}
 .notes {{ display: none; font-size: 2vh; border-top: 2px dashed #0072B2; margin-top: 1vh; max-width: 90em; }}
 body.notes .notes {{ display: block; }}
 @media print {{ .slide {{ display: flex; page-break-after: always; }} }}
</style></head>
<body>
{slides}
<script>
 var slides = document.querySelectorAll('.slide'), at = 0;
 function show(i) {{ at = Math.max(0, Math.min(slides.length - 1, i));
   slides.forEach(function (s, k) {{ s.classList.toggle('on', k === at); }});
   history.replaceState(null, '', '#s' + (at + 1)); }}
 document.addEventListener('keydown', function (e) {{
   if (['ArrowRight', 'PageDown', ' '].indexOf(e.key) >= 0) show(at + 1);
   else if (['ArrowLeft', 'PageUp'].indexOf(e.key) >= 0) show(at - 1);
   else if (e.key === 'Home') show(0); else if (e.key === 'End') show(slides.length - 1);
   else if (e.key === 'n' || e.key === 'N') document.body.classList.toggle('notes'); }});
 document.addEventListener('click', function () {{ show(at + 1); }});
 show(parseInt((location.hash || '#s1').slice(2), 10) - 1 || 0);
</script>
<noscript><style>.slide {{ display: flex; height: auto; }}</style></noscript>
</body></html>
"""


def pdf_deck(tour: Tour, images: list[QImage]) -> bytes:
    """One landscape page per step: header, picture, caption, source and notes."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setTitle(f"{tour.lesson} · {tour.title}")
    writer.setCreator("AI Systems Explorer")
    writer.setResolution(150)
    writer.setPageLayout(QPageLayout(QPageSize(QSizeF(338.7, 190.5), QPageSize.Millimeter), QPageLayout.Portrait,
                                     QMarginsF(8, 8, 8, 8), QPageLayout.Millimeter))
    painter = QPainter(writer)
    try:
        n = len(tour.steps)
        for i, (step, image) in enumerate(zip(tour.steps, images)):
            if i:
                writer.newPage()
            page = QRectF(painter.viewport())
            pt = page.height() / 60                     # one "line" of type, in device pixels
            font = painter.font()
            font.setPixelSize(int(pt * 1.2))
            painter.setFont(font)
            painter.setPen(Qt.darkGray)
            painter.drawText(QRectF(0, 0, page.width(), pt * 2), Qt.AlignLeft | Qt.AlignVCenter,
                             f"{tour.lesson} · {tour.title}")
            painter.drawText(QRectF(0, 0, page.width(), pt * 2), Qt.AlignRight | Qt.AlignVCenter,
                             f"step {i + 1} of {n}")
            text = QTextDocument()
            text.setDefaultFont(font)
            text.setTextWidth(page.width())
            parts = [f"<p style='font-size:{int(pt * 1.9)}px'>{escape(step.caption)}</p>"]
            if step.source:
                parts.append(f"<p style='font-size:{int(pt * 1.2)}px; color:#555'>Source: {escape(step.source)}</p>")
            if step.notes:
                parts.append(f"<p style='font-size:{int(pt * 1.2)}px; color:#555'>Notes: {escape(step.notes)}</p>")
            text.setHtml("".join(parts))
            text_h = text.size().height()
            room = QRectF(0, pt * 2.5, page.width(), max(pt * 10, page.height() - pt * 3 - text_h))
            size = image.size().toSizeF().scaled(room.size(), Qt.KeepAspectRatio)
            target = QRectF(room.x() + (room.width() - size.width()) / 2, room.y(), size.width(), size.height())
            painter.drawImage(target, image)
            painter.save()
            painter.translate(0, target.bottom() + pt * 0.5)
            text.drawContents(painter)
            painter.restore()
    finally:
        painter.end()
    buf.close()
    return bytes(data)


def export_tour(win, tour: Tour, path: str | Path, progress=None) -> Path:
    """Write ``tour`` as ``.html`` or ``.pdf`` (by the file's suffix), atomically."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".html", ".htm", ".pdf"):
        raise ValueError(f"{path.name}: a tour exports as .html or .pdf")
    images = step_images(win, tour, progress=progress)
    if suffix == ".pdf":
        atomic_write_bytes(path, pdf_deck(tour, images))
    else:
        atomic_write_text(path, html_deck(tour, images))
    return path
