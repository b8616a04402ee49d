"""Static analysis of a source tree: modules, conditions, the symbolic walk, the flag catalog, call paths, rules."""
