"""The reference implementations as test oracles (see README.md here)."""
