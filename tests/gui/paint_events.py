"""A counter of the paint events a widget gets (tests of how often a view paints)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class Paints(QObject):
    """Install on a widget (``installEventFilter``); ``count`` is how many times it painted."""

    count = 0

    def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Paint:
            self.count += 1
        return False
