"""One module per topic; each defines ``PANEL``, a subclass of :class:`explorer.panel.Panel`.

``REGISTRY`` lists them so the window can show every tab without importing any panel module:
a panel (and its engines, networkx, yaml …) is imported the first time its tab is shown, which
keeps start-up close to a bare Qt window. ``tests/test_panel_registry.py`` checks that this list
matches the ``PANEL`` classes exactly, so it cannot drift.
"""

# (module, key, tab title, order)
REGISTRY: list[tuple[str, str, str, int]] = [
    ("overview", "overview", "Scenario overview", 0),
    ("memory", "memory", "Training memory", 10),
    ("pipeline", "pipeline", "Pipeline and tensor parallelism", 30),
    ("quant", "quant", "Quantization", 45),
    ("qeval", "qeval", "Quantization evaluation", 50),
    ("scale", "scale", "Training at scale", 60),
    ("compute", "compute", "Compute, power and cost", 65),
    ("serving", "serving", "Inference serving", 70),
    ("selfhost", "selfhost", "Self-hosting", 75),
    ("k8s", "k8s", "Kubernetes loops", 80),
    ("law", "law", "EU law: CRA and PLD", 90),
    ("trading", "trading", "Language models in trading", 95),
]
