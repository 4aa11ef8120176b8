"""Choosing CUTLASS template instances: the kernel choice record, the shape heuristic and
the tuner's candidate sets. Nothing here touches a GPU."""
