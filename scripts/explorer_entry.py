"""Entry point of the frozen (PyInstaller) app."""
import multiprocessing

from explorer.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the FSDP probe and pipeline runs may spawn workers
    raise SystemExit(main())
