"""Checking launch commands against a rule set: findings, fixes, words, SARIF, upgrades, typical launches."""
