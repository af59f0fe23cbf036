"""Entry point of the frozen (PyInstaller) app."""
import multiprocessing
import runpy
import sys

# Engines that start worker processes call ``sys.executable -m <module>``; frozen, sys.executable is
# this program, so serve those module runs here (only the ones the engines actually use).
WORKER_MODULES = {"engines.memory.fsdp_probe"}

if __name__ == "__main__":
    multiprocessing.freeze_support()
    if len(sys.argv) > 2 and sys.argv[1] == "-m" and sys.argv[2] in WORKER_MODULES:
        module = sys.argv[2]
        sys.argv = [module, *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        raise SystemExit(0)
    from explorer.cli import main

    raise SystemExit(main())
