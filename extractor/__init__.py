"""sglang-constraints: static extraction of SGLang's server-argument constraints into JSON rules.

The package is built in layers, each a sub-package that imports only from the layers below it
(`tests/test_layers.py` holds every import to this, lazy ones too), from the ground up:

- `core`: the data model, exit codes and error types, formulas over atoms, JSON;
- `logic`: reasoning over formulas: implication and models, safe evaluation of condition text,
  launch commands parsed into facts, three-valued truth of a rule under them;
- `sources`: the input: source trees from PyPI, local paths and git, and which files to read;
- `analysis`: static analysis of a tree: modules, conditions, the symbolic walk, flags, call paths, rules;
- `products`: what is made of the rules: the extraction itself (with witnesses and relations), the
  graph and its exports, documents, pages, the launch check, diffs, the extraction cache, history;
- `commands`: one thin module per subcommand: argparse setup and what it prints;
- `cli`: the parser of all subcommands, and errors turned into exit codes.
"""

__version__ = "0.1.0"

LAYERS = ("core", "logic", "sources", "analysis", "products", "commands", "cli")
