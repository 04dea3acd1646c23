"""Scaffolds: one folder per method (card README, config.yaml defaults, overridden components)."""
