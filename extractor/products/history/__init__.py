"""Rules across sources: snapshots, diffs between two, history over many."""
