"""What is made from the analysed rules: extraction, witnesses, relations, graph, documents, pages, diffs, history."""
