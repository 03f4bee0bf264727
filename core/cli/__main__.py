"""``python -m core.cli ...`` (what the benchmarks and the installer checks run)."""

from core.cli import main

raise SystemExit(main())
