"""One measurement in a fresh process: ``python -m benchmarks._child SYSTEM WORKLOAD SIZE``.

Prints one JSON object with the workload's metrics on stdout.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys


def main(argv: list[str]) -> int:
    system, workload, size = argv[0], argv[1], int(argv[2])
    if workload == "W0":
        # Import cost: the system's own module would import what W0 times.
        from benchmarks._imports import run

        print(json.dumps(run(system, size)))
        return 0
    module = importlib.import_module(f"benchmarks._{system}")
    gc.collect()
    print(json.dumps(module.run(workload, size)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
