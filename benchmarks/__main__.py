"""``python -m benchmarks``: run the suite and write ``benchmarks/results/``."""

from benchmarks._suite import main

raise SystemExit(main())
