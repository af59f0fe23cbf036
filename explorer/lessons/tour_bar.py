"""The strip under the picture while a tour runs: where you are, the caption in large type, its source,
and the buttons to move on."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QFontMetricsF
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from explorer.lessons.catalog import next_lesson

CAPTION_SCALE = 1.3            # the caption's type against the application's
PRESENTER_CAPTION_SCALE = 1.1  # presenter type is already 1.6 times larger: the picture keeps the room
SOURCE_SCALE, PRESENTER_SOURCE_SCALE = 0.9, 0.8   # the source line's type against the application's


PRESENTER_SOURCE_LINES = 2     # a long citation list took five lines of a 1280×800 slide (A1 14)


class SourceLine(QLabel):
    """The step's source in small type, cut to ``lines`` lines at a word with "…" when it is longer
    (the whole of it in the tooltip, and in the exported deck); ``lines=None`` shows all of it."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("muted")
        self.setWordWrap(True)
        self.setTextFormat(Qt.RichText)
        self.full, self.point_size, self.lines, self._shown = "", 0.0, None, ""

    def show_source(self, text: str, point_size: float, lines: int | None) -> None:
        self.full, self.point_size, self.lines = text, point_size, lines
        self.setToolTip("")
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._fit()

    def shown(self) -> str:
        """The text as shown (plain): all of the source, or its first lines and "…"."""
        return self._shown

    def _fit(self) -> None:
        text = self.full
        if self.lines is not None and text and self.width() > 50:
            font = QFont(self.font())
            font.setPointSizeF(self.point_size)
            fm = QFontMetricsF(font)
            room = fm.lineSpacing() * self.lines + 1
            width = self.contentsRect().width()

            def height(t: str) -> float:
                return fm.boundingRect(QRectF(0, 0, width, 1e6), Qt.TextWordWrap, t).height()

            if height(text) > room:
                words = text.split(" ")
                lo, hi = 0, len(words)        # the most words that fit with "…" after them
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if height(" ".join(words[:mid]) + " …") <= room:
                        lo = mid
                    else:
                        hi = mid - 1
                text = " ".join(words[:lo]) + " …"
                self.setToolTip(self.full)
        self._shown = text
        super().setText(f"<span style='font-size:{self.point_size:.1f}pt'>{escape(text)}</span>" if text else "")


def _has_practice(lesson: str) -> bool:
    from engines.practice import shipped_lessons

    return lesson in shipped_lessons()


class TourBar(QFrame):
    def __init__(self, player) -> None:
        super().__init__()
        self.player = player
        self.setObjectName("tour_bar")
        self.setFrameShape(QFrame.StyledPanel)
        self.setAccessibleName("Tour step")
        outer = QHBoxLayout(self)
        outer.setContentsMargins(10, 6, 10, 6)
        text = self._text = QVBoxLayout()
        self.where = QLabel()
        self.where.setObjectName("muted")
        self.where.setWordWrap(True)
        self.caption = QLabel()
        self.caption.setObjectName("tour_caption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.source = SourceLine()
        # the last step leads on: the course's next lesson, a link on the "where" line (it wraps, so a
        # long title neither widens the window nor costs the slide a row), practice among the buttons
        self.next_lesson_link = QLabel()
        self.next_lesson_link.setObjectName("next_lesson")
        self.next_lesson_link.setAccessibleName("Next lesson")
        self.next_lesson_link.setTextFormat(Qt.RichText)
        self.next_lesson_link.setWordWrap(True)
        self.next_lesson_link.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.next_lesson_link.setTextInteractionFlags(Qt.LinksAccessibleByMouse | Qt.LinksAccessibleByKeyboard)
        self.next_lesson_link.linkActivated.connect(self._next_lesson)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.where, 1)
        top.addWidget(self.next_lesson_link, 1)
        text.addLayout(top)
        for w in (self.caption, self.source):
            text.addWidget(w)
        outer.addLayout(text, 1)
        buttons = QGridLayout()
        buttons.setSpacing(4)
        self.prev_button = self._button("◀", "Previous step (Alt+←; PgUp during a tour)", player.previous)
        self.next_button = self._button("Next ▶", "Next step (Alt+→; PgDn during a tour)", player.next)
        self.controls_button = self._button("☰", "A tour folds the side columns (and in presenter mode the "
                                                 "controls) away: show them again (F6)", None)
        self.controls_button.setCheckable(True)
        self.end_button = self._button("✕", "End the tour (the view stays as it is)", player.stop)
        buttons.addWidget(self.prev_button, 0, 0)
        buttons.addWidget(self.next_button, 0, 1)
        buttons.addWidget(self.controls_button, 1, 0)
        buttons.addWidget(self.end_button, 1, 1, Qt.AlignRight)
        self.practice_button = self._button("✎ Practice", "Practise this lesson: exercises marked by the engines",
                                            lambda: player.win.open_practice(player.tour.lesson))
        buttons.addWidget(self.practice_button, 2, 0, 1, 2)      # shown on a lesson's last step
        buttons.setRowStretch(3, 1)
        outer.addLayout(buttons)
        self._cached: tuple[object, int, str] | None = None   # (tour, step, note) of a view drawn from the cache
        self._written: tuple | None = None                    # what ``refresh`` last wrote
        self._tallest: tuple = ()                             # see ``_keep_tallest``
        player.changed.connect(self.refresh)
        from explorer.tasks import cache_hits

        cache_hits().hit.connect(self._cache_hit)
        self.refresh()

    def _keep_tallest(self) -> None:
        """In the window, during a tour, the bar keeps room for the tour's longest caption and source
        (measured for every step when the tour, width or text size changes) and grows if a step needs
        more: a caption a line longer or shorter than the last would otherwise move the picture's edge
        and re-lay out every chart of the panel (A2: 9 of 18 steps changed the panel's height, by 7 to
        62 px). Presenting, it fits each caption: there every row of a 1280×800 slide is the picture's,
        and the tour folds the panel around the view anyway."""
        if self.player.tour is None or self.player.win.presenting:
            self._tallest = ()
            self.setMinimumHeight(0)
            return
        key = (id(self.player.tour), self.width(), self.font().pointSizeF())
        need = self.layout().totalHeightForWidth(self.width())
        if key == self._tallest:
            floor = self.minimumHeight()
        else:            # a new tour (or width): room for its longest caption and source from the start
            steps = self.player.tour.steps
            floor = need + max(self._text_height(s) for s in steps) - self._text_height(self.player.step)
            self._tallest = key
        self.setMinimumHeight(max(floor, need))

    def _text_height(self, step) -> int:
        """The height ``step``'s caption and source take at the labels' widths now, measured as plain
        text (microseconds a step; a rich-text label re-laid out for each took milliseconds)."""
        def wrapped(label: QLabel, point_size: float, text: str) -> int:
            font = QFont(label.font())
            font.setPointSizeF(point_size)
            room = QRect(0, 0, max(1, label.contentsRect().width()), 1 << 20)
            return QFontMetrics(font).boundingRect(room, Qt.TextWordWrap, text).height()

        size = self.font().pointSizeF()
        height = wrapped(self.caption, size * CAPTION_SCALE, step.caption)
        if step.source:
            height += self._text.spacing() + wrapped(self.source, size * SOURCE_SCALE, f"Source: {step.source}")
        return height

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._keep_tallest()

    def _cache_hit(self, runner, origin) -> None:
        """A job of the panel on show was drawn from the cache: say when and where it was computed."""
        if self.player.tour is not None and runner.parent() is self.player.win.current_panel():
            self._cached = (self.player.tour, self.player.index, origin.short())
            self.where.setToolTip(origin.describe())
            self.refresh()

    def _next_lesson(self, lesson_id: str) -> None:
        self.player.win.lessons.start_lesson(lesson_id)

    @staticmethod
    def _button(text: str, tip: str, slot) -> QPushButton:
        b = QPushButton(text)
        b.setToolTip(tip)
        b.setAccessibleName(tip.split(" (")[0].split(":")[0])
        if slot is not None:
            b.clicked.connect(slot)
        return b

    def refresh(self) -> None:
        """Write the step's place, caption and source; a step both the player and the shell announce
        is written once (each rich-text label re-laid out its text, 7 ms a time on A2's steps)."""
        tour, step = self.player.tour, self.player.step
        self.setVisible(tour is not None)
        if tour is None:
            self._written = None
            self._keep_tallest()
            return
        n, i = len(tour.steps), self.player.index
        edited = " · edited, not saved" if self.player.modified else ""
        cached = (f" · {self._cached[2]}" if self._cached is not None and self._cached[:2] == (tour, i)
                  else "")
        presenting, folds = self.player.win.presenting, self.player.win.lessons.folds
        written = (tour, i, step, edited, cached, self.player.error, presenting, folds, self.font().pointSizeF(),
                   self.player.win.ctx.theme.error)
        if written == self._written:
            return
        self._written = written
        after = next_lesson(tour.lesson, [info.key for info in self.player.win.panel_infos]) if i + 1 == n else None
        # beside the next lesson's link the tour's own title gives way: one line, not two, under the slide
        title = "" if after is not None else f" · {tour.title}"
        self.where.setText(f"{tour.lesson}{title} — step {i + 1} of {n}{edited}{cached}")
        size = self.font().pointSizeF() * (PRESENTER_CAPTION_SCALE if presenting else CAPTION_SCALE)
        error = (f"<br><span style='color:{self.player.win.ctx.theme.error}'>⚠ {escape(self.player.error)}</span>"
                 if self.player.error else "")
        self.caption.setText(f"<span style='font-size:{size:.1f}pt'>{escape(step.caption)}</span>{error}")
        small = self.font().pointSizeF() * (PRESENTER_SOURCE_SCALE if presenting else SOURCE_SCALE)
        self.source.show_source(f"Source: {step.source}" if step.source else "", small,
                                PRESENTER_SOURCE_LINES if presenting else None)
        self.source.setVisible(bool(step.source))
        self.prev_button.setEnabled(i > 0)
        self.next_button.setEnabled(i + 1 < n)
        self.practice_button.setVisible(i + 1 == n and _has_practice(tour.lesson))
        if after is not None:
            self.next_lesson_link.setText(f"<a href='{after.id}'>Next lesson: {escape(after.title)} ▶</a>")
            self.next_lesson_link.setToolTip(f"{after.id}: {after.summary}")
        self.next_lesson_link.setVisible(after is not None)
        self.controls_button.setVisible(folds)
        self._keep_tallest()
