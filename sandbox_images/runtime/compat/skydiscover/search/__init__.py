"""Compat shim: the ``skydiscover.search`` names that EvoX strategies import (Galapagos' own code).

Strategies written for SkyDiscover's EvoX do ``from skydiscover.search.base_database import
Program, ProgramDatabase`` and ``from skydiscover.config import DatabaseConfig``; both resolve
to this package inside a strategy container (the strategy server maps ``skydiscover.config``
onto :mod:`skydiscover.search.database_config` when no such module exists).
"""
