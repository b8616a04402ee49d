"""The subcommands: each a thin module of argparse setup and presentation over the products."""
