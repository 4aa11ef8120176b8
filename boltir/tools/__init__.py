"""Command-line tools: bolt-opt, bolt-run, boltc."""
