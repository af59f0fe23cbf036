"""``explorer --export-exercises ID OUT``: a lesson's exercises as Moodle XML, an HTML worksheet or a
PDF worksheet (the HTML laid out by QTextDocument onto a QPdfWriter). Files are written atomically."""
from __future__ import annotations

from pathlib import Path

from engines.core.errors import ValidationError
from engines.core.writing import atomic_write_bytes, atomic_write_text
from engines.practice import lesson_templates
from engines.practice.export import moodle_xml, variants, worksheet_html

FORMATS = (".xml", ".html", ".htm", ".pdf")
MAX_VARIANTS = 200


def _title(lesson: str) -> str:
    from explorer.lessons.catalog import lessons

    for item in lessons():
        if item.id == lesson:
            return item.title
    return lesson


def export_exercises(lesson: str, out: str | Path, count: int = 10, seed: int = 1) -> tuple[Path, int]:
    """Write ``count`` variants of each of ``lesson``'s templates to ``out`` (format from its suffix);
    returns the path and the number of questions written."""
    templates = lesson_templates(lesson)
    if not templates:
        raise ValidationError("lesson", f"{lesson!r} has no exercises yet")
    if not 1 <= count <= MAX_VARIANTS:
        raise ValidationError("variants", f"{count} variants", f"1…{MAX_VARIANTS}")
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValidationError("out", f"{path.name}: unknown format", ", ".join(FORMATS))
    items = variants(templates, count, seed)
    title = _title(lesson)
    if suffix == ".xml":
        kept = [v for v in items if v.template.kind != "knobs"]
        atomic_write_text(path, moodle_xml(lesson, title, kept))
        return path, len(kept)
    html = worksheet_html(lesson, title, items)
    if suffix in (".html", ".htm"):
        atomic_write_text(path, html)
    else:
        atomic_write_bytes(path, pdf_bytes(html))
    return path, len(items)


def pdf_bytes(html: str) -> bytes:
    """The worksheet as A4 PDF pages (Qt's own PDF writer; page breaks from the HTML's CSS)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF
    from PySide6.QtGui import QFont, QPageLayout, QPageSize, QPdfWriter, QTextDocument

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(18, 18, 18, 18), QPageLayout.Unit.Millimeter))
    writer.setResolution(300)
    writer.setTitle("AI Systems Explorer exercises")
    doc = QTextDocument()
    doc.setDefaultFont(QFont("DejaVu Sans", 10))
    doc.setHtml(html)
    doc.print_(writer)
    del writer          # finishes the PDF into the buffer
    buf.close()
    return bytes(data)
