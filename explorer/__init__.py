"""The application shell: main window, scenario model, timeline player, exports, CLI, workers."""

__version__ = "0.1.0"
