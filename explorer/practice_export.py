"""``explorer --export-exercises ID OUT``: a lesson's exercises as Moodle XML, an HTML worksheet or a
PDF worksheet (the HTML laid out by QTextDocument onto a QPdfWriter). Files are written atomically."""
from __future__ import annotations

from pathlib import Path

from engines.core.errors import ValidationError
from engines.core.writing import atomic_write_bytes, atomic_write_text
from engines.practice import lesson_templates
from engines.practice.export import STYLE, moodle_xml, variants, worksheet_blocks, worksheet_html

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
    if suffix in (".html", ".htm"):
        atomic_write_text(path, worksheet_html(lesson, title, items))
    else:
        atomic_write_bytes(path, pdf_bytes(*worksheet_blocks(lesson, title, items)))
    return path, len(items)


def pdf_bytes(head: str, questions: list[str], key_head: str, answers: list[str]) -> bytes:
    """The worksheet as A4 PDF pages (Qt's own PDF writer): each question and each answer is laid
    out as one block and moved whole to the next page when it does not fit; the key starts a page."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF
    from PySide6.QtGui import QFont, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(18, 18, 18, 18), QPageLayout.Unit.Millimeter))
    writer.setResolution(300)
    writer.setTitle("AI Systems Explorer exercises")
    painter = QPainter(writer)
    width, height = writer.width(), writer.height()
    y = 0.0

    def block(html: str, new_page: bool = False) -> None:
        nonlocal y
        doc = QTextDocument()
        doc.documentLayout().setPaintDevice(writer)
        doc.setDefaultFont(QFont("DejaVu Sans", 10))
        doc.setDefaultStyleSheet(STYLE)
        doc.setHtml(html)
        doc.setTextWidth(width)
        h = doc.size().height()
        if new_page or (y > 0 and y + h > height):
            writer.newPage()
            y = 0.0
        painter.save()
        painter.translate(0, y)
        doc.drawContents(painter)
        painter.restore()
        y += h

    block(head)
    for q in questions:
        block(q)
    if key_head or answers:          # the key starts a page of its own
        block(key_head, new_page=True)
    for a in answers:
        block(a)
    painter.end()
    buf.close()
    return bytes(data)
