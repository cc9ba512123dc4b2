"""solitaire-env's benchmark, one module per section; run it with ``python benchmarks/bench.py``."""
