"""The shared timeline: position is model state (napari dims style).

Stepping, scrubbing, playing and exporting frames all go through ``TimelineModel.set_position``;
the play timer only *requests* the next frame. Whichever panel is active binds its TimelineSpec.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QWidget)

from explorer.ui.live_text import pin_size


@dataclass(frozen=True)
class TimelineSpec:
    """What an animated panel offers the player: frame count, named chapters, natural speed, and
    the frame shown when the panel opens (``start``): a still that teaches, not an empty chart.
    ``name`` says which animation: a panel with two (its view tabs) names them, and a spec of another
    name opens at its ``start`` instead of keeping the old animation's position."""

    n_frames: int
    chapters: list[tuple[int, str]] = field(default_factory=list)
    fps: float = 10.0
    start: int = 0
    name: str = ""


class TimelineModel(QObject):
    position_changed = Signal(int)
    spec_changed = Signal(object)
    playing_changed = Signal(bool)

    SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.spec: TimelineSpec | None = None
        self.position = 0
        self.speed = 1.0
        self.loop = True
        self._stop_at: int | None = None      # play_chapter: the frame to stop on
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.timeout.connect(self._tick)

    # --- state ---------------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return self.spec.n_frames if self.spec else 0

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def set_spec(self, spec: TimelineSpec | None, keep_position: bool = False) -> None:
        """Bind a new spec; ``keep_position`` (the same panel, recomputed) also keeps a chapter being
        played going, so a tour step's animation survives its panel's result arriving."""
        if self.spec is not None and spec is not None and spec.name != self.spec.name:
            keep_position = False           # another animation of the panel: its position means nothing here
        stop_at = self._stop_at if keep_position and self.playing else None
        self.stop()
        self.spec = spec if spec and spec.n_frames > 0 else None
        start = self.spec.start if self.spec else 0
        pos = min(self.position if keep_position else start, self.n_frames - 1)
        self.position = max(0, pos)
        self.spec_changed.emit(self.spec)
        self.position_changed.emit(self.position)
        if stop_at is not None and self.spec is not None and self.position < min(stop_at, self.n_frames - 1):
            self.play()
            self._stop_at = min(stop_at, self.n_frames - 1)

    def set_position(self, index: int) -> None:
        if not self.spec:
            return
        index = max(0, min(self.n_frames - 1, int(index)))
        if index != self.position:
            self.position = index
            self.position_changed.emit(index)

    def step(self, delta: int) -> None:
        self.set_position(self.position + delta)

    def home(self) -> None:
        self.set_position(0)

    def end(self) -> None:
        self.set_position(self.n_frames - 1)

    def chapter(self, direction: int) -> None:
        """Jump to the next (+1) or previous (−1) chapter mark."""
        if not self.spec or not self.spec.chapters:
            return
        marks = sorted(i for i, _ in self.spec.chapters)
        if direction > 0:
            nxt = [m for m in marks if m > self.position]
            self.set_position(nxt[0] if nxt else self.n_frames - 1)
        else:
            prv = [m for m in marks if m < self.position]
            self.set_position(prv[-1] if prv else 0)

    def current_chapter(self) -> str:
        if not self.spec:
            return ""
        name = ""
        for i, label in sorted(self.spec.chapters):
            if i <= self.position:
                name = label
        return name

    # --- playing ------------------------------------------------------------------------
    def set_speed(self, speed: float) -> None:
        self.speed = speed
        if self.playing:
            self._timer.start(self._interval_ms())

    def _interval_ms(self) -> int:
        fps = (self.spec.fps if self.spec else 10.0) * self.speed
        return max(16, int(1000 / max(fps, 0.1)))

    def play_chapter(self) -> None:
        """Play from here to the next chapter mark (or the end) and stop there: a tour step's animation."""
        if not self.spec or self.n_frames < 2:
            return
        marks = sorted(i for i, _ in self.spec.chapters if i > self.position)
        end = marks[0] if marks else self.n_frames - 1
        if end <= self.position:
            return
        self.play()
        self._stop_at = end

    def play(self) -> None:
        self._stop_at = None
        if not self.spec or self.n_frames < 2:
            return
        if self.position >= self.n_frames - 1:
            self.set_position(0)
        self._timer.start(self._interval_ms())
        self.playing_changed.emit(True)

    def stop(self) -> None:
        self._stop_at = None
        if self._timer.isActive():
            self._timer.stop()
            self.playing_changed.emit(False)

    def toggle(self) -> None:
        self.stop() if self.playing else self.play()

    def _tick(self) -> None:
        if self._stop_at is not None and self.position + 1 >= self._stop_at:
            self.set_position(self._stop_at)
            self.stop()
            return
        if self.position >= self.n_frames - 1:
            if self.loop:
                self.set_position(0)
            else:
                self.stop()
            return
        self.set_position(self.position + 1)


class PlayerWidget(QWidget):
    """Transport controls for the shared timeline; keyboard shortcuts live on the main window."""

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)

        def button(text: str, tip: str, slot) -> QPushButton:
            b = QPushButton(text)
            b.setToolTip(tip)
            b.setAccessibleName(tip)
            b.clicked.connect(slot)
            lay.addWidget(b)
            return b

        self.home_button = button("⇤ Start", "First frame (Home)", model.home)
        self.back_button = button("◀", "Step back (←, Shift: ×10)", lambda: model.step(-1))
        self.play_button = button("▶ Play", "Play / pause (Space)", model.toggle)
        self.fwd_button = button("▶", "Step forward (→, Shift: ×10)", lambda: model.step(1))
        self.end_button = button("End ⇥", "Last frame (End)", model.end)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setAccessibleName("Timeline position")
        self.slider.valueChanged.connect(model.set_position)
        lay.addWidget(self.slider, 1)
        self.frame_label = QLabel("")
        lay.addWidget(self.frame_label)
        self.chapters = QComboBox()
        self.chapters.setAccessibleName("Chapter")
        self.chapters.setToolTip("Jump to a chapter (PgUp / PgDn)")
        self.chapters.activated.connect(self._chapter_chosen)
        # as wide as the longest chapter of the timeline shown (the default sized it once, for the
        # first panel's chapters: "failure: GPU HBM3 memory" read "failur"), up to CHAPTER_CHARS
        self.chapters.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        lay.addWidget(self.chapters)
        self.speed = QComboBox()
        self.speed.setAccessibleName("Playback speed")
        for s in model.SPEEDS:
            self.speed.addItem(f"{s:g}×", s)
        self.speed.setCurrentIndex(model.SPEEDS.index(1.0))
        self.speed.currentIndexChanged.connect(lambda i: model.set_speed(self.speed.itemData(i)))
        lay.addWidget(self.speed)
        model.spec_changed.connect(self._spec)
        model.position_changed.connect(self._position)
        model.playing_changed.connect(lambda p: self.play_button.setText("❚❚ Pause" if p else "▶ Play"))
        self._spec(model.spec)

    CHAPTER_CHARS = 34   # the chapter box's widest: the slider keeps the rest

    def _pin_frame_label(self) -> None:
        """Room for the longest "frame i/n" of this timeline, fixed: a label that may change size
        re-lays out the dock and the main window (every panel) on each frame it is re-texted."""
        n = self.model.n_frames
        longest = max(f"frame {n}/{n}", "no animation", key=self.frame_label.fontMetrics().horizontalAdvance)
        pin_size(self.frame_label, longest=longest)
        self.chapters.setMaximumWidth(self.chapters.fontMetrics().averageCharWidth() * self.CHAPTER_CHARS)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.FontChange:   # the label gets the new font after its parent:
            QTimer.singleShot(0, self._pin_frame_label)   # measure it once it has
        super().changeEvent(event)

    def _spec(self, spec: TimelineSpec | None) -> None:
        enabled = spec is not None
        for w in (self.home_button, self.back_button, self.play_button, self.fwd_button, self.end_button,
                  self.slider, self.chapters, self.speed):
            w.setEnabled(enabled)
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, (spec.n_frames - 1) if spec else 0))
        self.slider.blockSignals(False)
        self.chapters.clear()
        for i, label in (spec.chapters if spec else []):
            self.chapters.addItem(label, i)
        self.chapters.setVisible(bool(spec and spec.chapters))
        self._pin_frame_label()
        self._position(self.model.position)

    def _position(self, index: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(index)
        self.slider.blockSignals(False)
        n = self.model.n_frames
        chap = self.model.current_chapter()
        self.frame_label.setText(f"frame {index + 1}/{n}" if n else "no animation")
        if chap:
            i = self.chapters.findText(chap)
            if i >= 0:
                self.chapters.blockSignals(True)
                self.chapters.setCurrentIndex(i)
                self.chapters.blockSignals(False)

    def _chapter_chosen(self, i: int) -> None:
        self.model.set_position(self.chapters.itemData(i))
