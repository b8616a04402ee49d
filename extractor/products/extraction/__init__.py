"""From a source tree to records and documents: extraction, witnesses, relations, graph, outputs."""
