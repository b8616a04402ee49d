"""Reasoning over formulas: implication and models, safe evaluation, launch commands parsed into facts."""
