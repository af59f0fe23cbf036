"""The strip under the picture while a tour runs: where you are, the caption in large type, its source,
and the buttons to move on."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

CAPTION_SCALE = 1.3     # the caption's type against the application's


class TourBar(QFrame):
    def __init__(self, player) -> None:
        super().__init__()
        self.player = player
        self.setObjectName("tour_bar")
        self.setFrameShape(QFrame.StyledPanel)
        self.setAccessibleName("Tour step")
        outer = QHBoxLayout(self)
        outer.setContentsMargins(10, 6, 10, 6)
        text = QVBoxLayout()
        self.where = QLabel()
        self.where.setObjectName("muted")
        self.caption = QLabel()
        self.caption.setObjectName("tour_caption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.source = QLabel()
        self.source.setObjectName("muted")
        self.source.setWordWrap(True)
        for w in (self.where, self.caption, self.source):
            text.addWidget(w)
        outer.addLayout(text, 1)
        buttons = QVBoxLayout()
        nav = QHBoxLayout()
        self.prev_button = QPushButton("◀ Previous")
        self.prev_button.setToolTip("Previous step (Alt+←; PgUp during a tour)")
        self.next_button = QPushButton("Next ▶")
        self.next_button.setToolTip("Next step (Alt+→; PgDn during a tour)")
        self.prev_button.clicked.connect(player.previous)
        self.next_button.clicked.connect(player.next)
        nav.addWidget(self.prev_button)
        nav.addWidget(self.next_button)
        buttons.addLayout(nav)
        extra = QHBoxLayout()
        self.controls_button = QPushButton("Show controls")
        self.controls_button.setCheckable(True)
        self.controls_button.setToolTip("Presenter mode folds the controls and side columns away during a tour; "
                                        "show them again (F6)")
        self.end_button = QPushButton("✕ End tour")
        self.end_button.setToolTip("Leave the tour; the view stays as it is")
        self.end_button.clicked.connect(player.stop)
        extra.addWidget(self.controls_button)
        extra.addWidget(self.end_button)
        buttons.addLayout(extra)
        buttons.addStretch(1)
        outer.addLayout(buttons)
        player.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        tour, step = self.player.tour, self.player.step
        self.setVisible(tour is not None)
        if tour is None:
            return
        n, i = len(tour.steps), self.player.index
        edited = " · edited, not saved" if self.player.modified else ""
        self.where.setText(f"{tour.lesson} · {tour.title} — step {i + 1} of {n}{edited}")
        size = self.font().pointSizeF() * CAPTION_SCALE
        error = (f"<br><span style='color:#b00020'>⚠ {escape(self.player.error)}</span>"
                 if self.player.error else "")
        self.caption.setText(f"<span style='font-size:{size:.1f}pt'>{escape(step.caption)}</span>{error}")
        self.source.setText(f"Source: {step.source}" if step.source else "")
        self.source.setVisible(bool(step.source))
        self.prev_button.setEnabled(i > 0)
        self.next_button.setEnabled(i + 1 < n)
        self.controls_button.setVisible(self.player.win.presenting)
