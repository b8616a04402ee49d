"""The input: SGLang source trees from PyPI releases, local paths and git commits, and which files to read."""
