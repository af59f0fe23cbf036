"""Every piece of text a widget tree draws, where it is and how large: what the slide check
(:mod:`explorer.lessons.checks`) reads to decide whether a step's caption is on screen and readable.

Collected from QLabels, live readouts, buttons, text views, item views (visible cells and headers),
and pyqtgraph scenes (text items, titles, legends, axis titles and tick labels); an item or widget
that paints text itself may say what it draws with ``drawn_texts()`` → ``[(text, QRectF, QFont)]``
in its own coordinates."""
from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import Qt  # QtGui's Qt has mightBeRichText
from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox, QComboBox, QGraphicsItem,
                               QGraphicsSimpleTextItem, QGraphicsTextItem, QGraphicsView, QLabel, QTextEdit, QWidget)


@dataclass(frozen=True)
class DrawnText:
    """One run of text: ``rect`` where it is drawn and ``clip`` the part of the window it can be
    seen in (both in window coordinates), ``px`` its font's pixel size on screen. ``kind`` is
    "text", "cell" (a table cell: laid out by its view) or "control" (an input's value)."""

    text: str
    rect: QRectF
    clip: QRectF
    px: float
    kind: str = "text"
    where: str = ""

    @property
    def cut(self) -> bool:
        """Part of the text lies outside what can be seen: 2 px of slack across, and a line's leading
        (a fifth of its height) up and down, where glyph boxes have no ink."""
        lead = min(self.rect.height(), self.px * 1.3) * 0.2
        return not self.clip.adjusted(-2, -2 - lead, 2, 2 + lead).contains(self.rect)


def _px(font: QFont, scale: float = 1.0) -> float:
    return QFontInfo(font).pixelSize() * scale


def _plain(text: str) -> str:
    if Qt.mightBeRichText(text):
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text


def visible_rect(w: QWidget, window: QWidget) -> QRectF:
    """The part of ``w`` its ancestors (scroll areas, splitters, the window) leave in view, in window
    coordinates (empty if none). Not ``visibleRegion()``: that also leaves out what opaque children cover."""
    if not w.isVisible():
        return QRectF()
    r = QRectF(_window_rect(w, w.rect(), window))
    p = w.parentWidget()
    while p is not None and p is not window:
        r = r.intersected(_window_rect(p, p.rect(), window))
        p = p.parentWidget()
    return r.intersected(QRectF(window.rect())) if not r.isEmpty() else QRectF()


def _window_rect(w: QWidget, r: QRectF | QRect, window: QWidget) -> QRectF:
    r = QRectF(r)
    return r.translated(QPointF(w.mapTo(window, QRect(0, 0, 1, 1).topLeft())))


def collect(root: QWidget, window: QWidget | None = None) -> list[DrawnText]:
    """The text drawn by ``root`` and its visible descendants, in ``window``'s coordinates."""
    window = window or root.window()
    out: list[DrawnText] = []
    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        if not w.isVisible() or w.isWindow() and w is not root:
            continue
        clip = visible_rect(w, window)
        if clip.isEmpty():
            continue
        name = f"{type(w).__name__}{':' + w.objectName() if w.objectName() else ''}"
        custom = getattr(w, "drawn_texts", None)
        if callable(custom):
            for text, rect, font in custom():
                out.append(DrawnText(text, _window_rect(w, rect, window), clip, _px(font), "text", name))
        elif isinstance(w, QLabel):
            _label(w, window, clip, name, out)
        elif isinstance(w, QAbstractButton) and w.text():
            out.append(DrawnText(w.text().replace("&", ""), clip, clip, _px(w.font()), "control", name))
        elif isinstance(w, QComboBox):
            out.append(DrawnText(w.currentText(), clip, clip, _px(w.font()), "control", name))
        elif isinstance(w, QAbstractSpinBox):
            out.append(DrawnText(w.text(), clip, clip, _px(w.font()), "control", name))
        elif isinstance(w, QTextEdit):
            out.append(DrawnText(w.toPlainText(), clip, clip, _px(w.document().defaultFont()), "text", name))
        elif isinstance(w, QAbstractItemView):
            _cells(w, window, name, out)
        elif isinstance(w, QGraphicsView) and w.scene() is not None:
            _scene(w, window, name, out)
        elif hasattr(w, "text") and hasattr(w, "reserve_lines"):       # explorer.ui.live_text.LiveText
            out.append(DrawnText(w.text(), clip, clip, _px(w.font()), "text", name))
    return [t for t in out if t.text.strip()]


def _label(w: QLabel, window: QWidget, clip: QRectF, name: str, out: list[DrawnText]) -> None:
    text = _plain(w.text())
    if not text.strip():
        return
    box = w.contentsRect().adjusted(w.margin(), w.margin(), -w.margin(), -w.margin())
    fm = QFontMetricsF(w.font())
    if w.wordWrap():
        need = fm.boundingRect(QRectF(box), int(w.alignment()) | Qt.TextWordWrap, text)
    else:
        need = fm.boundingRect(QRectF(box), int(w.alignment()), text)
    # laid out as rich text (its own layout says how tall) when marked so, not only when it looks so:
    # a rich-text label of escaped words wraps by QTextDocument, not by the font's metrics
    if w.textFormat() == Qt.RichText or Qt.mightBeRichText(w.text()):
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(w.font())
        doc.setHtml(w.text())
        if w.wordWrap():
            doc.setTextWidth(box.width())
        size = doc.size()
        need = QRectF(box.x(), box.y(), min(size.width(), box.width()) if w.wordWrap() else size.width(),
                      size.height())
        px = _rich_px(doc, w.font())
    else:
        px = _px(w.font())
    out.append(DrawnText(text, _window_rect(w, need, window), clip, px, "text", name))


def _rich_px(doc: QTextDocument, default: QFont) -> float:
    """The smallest font pixel size used in a rich-text document."""
    least = math.inf
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.text().strip():
                least = min(least, _px(frag.charFormat().font()))
            it += 1
        block = block.next()
    return least if least < math.inf else _px(default)


def _cells(view: QAbstractItemView, window: QWidget, name: str, out: list[DrawnText]) -> None:
    model = view.model()
    if model is None:
        return
    port = view.viewport()
    clip = visible_rect(port, window)
    if clip.isEmpty():
        return
    font = view.font()
    fm = QFontMetricsF(font)
    root = view.rootIndex()
    for r in range(min(model.rowCount(root), 500)):
        for c in range(min(model.columnCount(root), 50)):
            index = model.index(r, c, root)
            rect = view.visualRect(index)
            if rect.isEmpty() or not port.rect().intersects(rect):
                continue
            text = model.data(index, Qt.DisplayRole)
            if text is None or str(text) == "":
                continue
            cell_font = model.data(index, Qt.FontRole) or font
            width = QFontMetricsF(cell_font).horizontalAdvance(str(text).split("\n")[0]) if cell_font is not font \
                else fm.horizontalAdvance(str(text).split("\n")[0])
            where = _window_rect(port, rect, window)
            drawn = QRectF(where.x(), where.y(), min(width + 6, where.width() * 4), where.height())
            if width + 6 > where.width() and view.wordWrap() and _wraps_into(str(text), cell_font, where):
                drawn = QRectF(where)      # wrapped onto lines that fit the cell: cut only where the view cuts it
                width = where.width() - 6
            out.append(DrawnText(str(text), drawn, where.intersected(clip) if width + 6 > where.width() else clip,
                                 _px(cell_font), "cell", name))
    for header, orient in ((getattr(view, "horizontalHeader", None), Qt.Horizontal),
                           (getattr(view, "verticalHeader", None), Qt.Vertical)):
        h = header() if callable(header) else None
        if h is None or not h.isVisible():
            continue
        hclip = visible_rect(h, window)
        for s in range(model.columnCount(root) if orient == Qt.Horizontal else model.rowCount(root)):
            if h.isSectionHidden(s):
                continue
            text = model.headerData(s, orient, Qt.DisplayRole)
            pos = h.sectionViewportPosition(s)
            size = h.sectionSize(s)
            if text is None or pos + size < 0 or pos > (h.width() if orient == Qt.Horizontal else h.height()):
                continue
            rect = QRect(pos, 0, size, h.height()) if orient == Qt.Horizontal else QRect(0, pos, h.width(), size)
            where = _window_rect(h.viewport(), rect, window).intersected(hclip)
            out.append(DrawnText(str(text), where, hclip, _px(h.font()), "cell", name + ":header"))


def _wraps_into(text: str, font: QFont, cell: QRectF) -> bool:
    """A word-wrapped view lays ``text`` on as many lines as the cell's width needs: it is whole when
    those lines fit the cell's height (and no single word is wider than the cell)."""
    fm = QFontMetricsF(font)
    room = QRectF(0, 0, cell.width() - 6, 1e6)
    need = fm.boundingRect(room, int(Qt.TextWordWrap), text)
    return need.width() <= room.width() + 0.5 and need.height() <= cell.height() + 0.5


def _scene(view: QGraphicsView, window: QWidget, name: str, out: list[DrawnText]) -> None:
    port = view.viewport()
    port_clip = visible_rect(port, window)
    if port_clip.isEmpty():
        return
    origin = QPointF(port.mapTo(window, QRect(0, 0, 1, 1).topLeft()))
    vt = view.viewportTransform()

    def to_window(item: QGraphicsItem, rect: QRectF) -> QRectF:
        return item.deviceTransform(vt).mapRect(rect).translated(origin)

    def clip_of(item: QGraphicsItem) -> QRectF:
        clip = QRectF(port_clip)
        p = item.parentItem()
        while p is not None:
            if p.flags() & QGraphicsItem.ItemClipsChildrenToShape:
                clip = clip.intersected(to_window(p, p.boundingRect()))
            p = p.parentItem()
        return clip

    import pyqtgraph as pg

    painter = None
    try:
        for item in view.scene().items():
            if not item.isVisible() or item.opacity() == 0:
                continue
            scale = math.sqrt(abs(item.deviceTransform(vt).determinant())) or 1.0
            custom = getattr(item, "drawn_texts", None)
            if callable(custom):
                for text, rect, font in custom():
                    out.append(DrawnText(text, to_window(item, rect), clip_of(item), _px(font, scale), "text", name))
            elif isinstance(item, QGraphicsTextItem):
                doc = item.document()
                margin = doc.documentMargin()
                rect = item.boundingRect().adjusted(margin, margin, -margin, -margin)
                px = _rich_px(doc, item.font()) * scale
                out.append(DrawnText(item.toPlainText(), to_window(item, rect), clip_of(item), px, "text", name))
            elif isinstance(item, QGraphicsSimpleTextItem):
                out.append(DrawnText(item.text(), to_window(item, item.boundingRect()), clip_of(item),
                                     _px(item.font(), scale), "text", name))
            elif isinstance(item, pg.AxisItem) and item.style.get("showValues", True):
                if painter is None:
                    image = QImage(4, 4, QImage.Format_ARGB32)
                    painter = QPainter(image)
                painter.setFont(item.style["tickFont"] or view.font())
                specs = item.generateDrawSpecs(painter)
                if not specs:
                    continue
                font = item.style["tickFont"] or view.font()
                own = to_window(item, item.boundingRect())
                for rect, _flags, text in specs[2]:
                    out.append(DrawnText(text, to_window(item, rect), own.intersected(port_clip),
                                         _px(font, scale), "text", name + ":axis"))
    finally:
        if painter is not None:
            painter.end()
