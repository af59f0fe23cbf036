"""The shared core every topic reads: the scenario and its presets, model architectures, the GPU
catalogue, errors, declared parameters, versioned files, the compute device and shipped assets."""
