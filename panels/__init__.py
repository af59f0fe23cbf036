"""One module per topic; each defines ``PANEL``, a subclass of :class:`explorer.panel.Panel`."""
