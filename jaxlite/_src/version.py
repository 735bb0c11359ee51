"""The version of jaxlite (``jaxlite.__version__``)."""
__version__ = "0.1.0"
