"""Data the app ships (presets, lesson texts, tensors, decision trees). Located via importlib.resources."""
