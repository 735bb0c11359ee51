"""Tier 0: the NumPy backend (eager implementations and the jaxpr -> Python compiler)."""
