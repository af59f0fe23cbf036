"""Application bootstrap: QApplication, fonts, the exception hook and the background device probe."""
from __future__ import annotations

import logging
import os
import sys
import traceback
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QRunnable, QSettings, QThreadPool, Signal
from PySide6.QtGui import QKeySequence, QPixmapCache
from PySide6.QtWidgets import QAbstractSpinBox, QApplication

from explorer.fonts import register_bundled_fonts

log = logging.getLogger("explorer")


def log_path() -> Path:
    base = os.environ.get("EXPLORER_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")), "ai-systems-explorer")
    return Path(base) / "explorer.log"


def setup_logging() -> None:
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("explorer")
    if not root.handlers:
        root.addHandler(handler)
        root.setLevel(logging.INFO)


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    if getattr(app, "_explorer_ready", False):   # configured once (tests ask for it per test)
        return app
    app.setApplicationName("AI Systems Explorer")
    app.setOrganizationName("ai-systems-explorer")
    register_bundled_fonts()
    size_pixmap_cache(app)
    app._explorer_ready = True
    return app


CACHED_VIEWS_PER_SCREEN = 12   # full-width chart items kept as pixmaps at once (the memory sweep's lines)


def size_pixmap_cache(app: QApplication) -> None:
    """Room in QPixmapCache for the charts' cached items (``DeviceCoordinateCache``).

    Qt's default is 10 MB. Memory's sweep caches its six lines and six marker sets as pixmaps of the
    view's size, so a marker move blits them; on a 1600-px wide view they need about 20 MB, the cache
    evicted them in turn, and every edit re-rendered all twelve (the sweep's paint took 5.8 ms instead
    of 1.5 ms, measured with benchmarks/interaction.py --layout no-dock). The limit scales with the
    screen, since the pixmaps do; only what is cached is allocated."""
    screen = app.primaryScreen()
    pixels = 1920 * 1080
    if screen is not None:
        size, dpr = screen.size(), screen.devicePixelRatio()
        pixels = max(pixels, int(size.width() * size.height() * dpr * dpr))
    QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), pixels * 4 * CACHED_VIEWS_PER_SCREEN // 1024))


def send_undo_to_the_scenario(root) -> None:
    """Ctrl+Z / Ctrl+Shift+Z undo scenario edits even while a spin box under ``root`` has the focus.
    The filter sits on the spin boxes only: an application-wide Python filter would run for every
    event (it slowed animation frames by milliseconds)."""
    app = QApplication.instance()
    if not hasattr(app, "_undo_to_window"):
        app._undo_to_window = UndoGoesToTheScenario(app)
    for spin in root.findChildren(QAbstractSpinBox):
        spin.installEventFilter(app._undo_to_window)


class UndoGoesToTheScenario(QObject):
    """A spin box's line edit would take Ctrl+Z for its own text undo, which nobody wants from a
    number field. Text editors (the k8s YAML) keep their own undo."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.ShortcutOverride and isinstance(obj, QAbstractSpinBox) \
                and (event.matches(QKeySequence.Undo) or event.matches(QKeySequence.Redo)
                     or event.keyCombination().toCombined() == QKeySequence("Ctrl+Shift+Z")[0].toCombined()):
            return True     # not offered to the spin box: the window's Undo/Redo shortcut fires
        return False


class ErrorSink(QObject):
    """Exceptions anywhere end up here: logged, counted, and shown in the window."""

    error = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str] = []

    def hook(self, etype, value, tb) -> None:
        text = "".join(traceback.format_exception(etype, value, tb))
        self.errors.append(text)
        log.error("Unhandled exception:\n%s", text)
        sys.__stderr__.write(text)
        self.error.emit(f"{etype.__name__}: {value}")


def install_excepthook() -> ErrorSink:
    sink = ErrorSink()
    sys.excepthook = sink.hook
    return sink


class _ProbeSignals(QObject):
    done = Signal(str, str)


class DeviceProbe(QRunnable):
    """Import torch and look for CUDA off the GUI thread, after the window is up."""

    def __init__(self, requested: str) -> None:
        super().__init__()
        self.requested = requested
        self.signals = _ProbeSignals()

    def run(self) -> None:
        from engines.core.device import device_label, resolve_device

        try:
            dev = resolve_device(self.requested)
            self.signals.done.emit(dev, device_label(dev))
        except Exception as exc:  # noqa: BLE001 - reported, CPU used
            self.signals.done.emit("cpu", f"CPU ({exc})")


def probe_device(requested: str, on_done) -> DeviceProbe:
    probe = DeviceProbe(requested)
    probe.signals.done.connect(on_done)
    QThreadPool.globalInstance().start(probe)
    return probe


def settings() -> QSettings:
    """Window layout store; EXPLORER_CONFIG_DIR redirects it (tests use a temporary folder)."""
    folder = os.environ.get("EXPLORER_CONFIG_DIR")
    if folder:
        return QSettings(str(Path(folder) / "explorer.ini"), QSettings.IniFormat)
    return QSettings("ai-systems-explorer", "explorer")
