"""The chart and widget toolkit every panel builds with: plots that fit their titles and labels,
legends, label layers, the tick grid, fast bar and scatter items, item pools, flow layout, live
text and the small widgets (sliders with units, inline errors, tabs). It imports neither engines
nor panels (tests/test_layering.py)."""
