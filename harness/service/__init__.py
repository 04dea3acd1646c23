"""service package."""
