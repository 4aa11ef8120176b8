"""boltir's dialects: `graph` (model level); `op` and `cutlass` come with their lowerings."""
