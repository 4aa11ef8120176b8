"""Measuring kernel candidates on the GPU: the tuning database, the tuner, its worker
process and the selectors that read the database (`db`) or tune first (`tune`)."""
