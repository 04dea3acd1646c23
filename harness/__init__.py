"""Galapagos: LLM-driven program search where nothing an LLM writes runs on the host."""

__version__ = "0.1.0"
__all__ = ["__version__"]
