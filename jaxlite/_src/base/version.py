"""The version of jaxlite (``jaxlite.__version__``), and the version of JAX whose API it
implements (what ``jax.__version__`` reports when jaxlite serves ``import jax``)."""
__version__ = "0.1.0"

# The JAX release whose public API jaxlite follows (behaviour, signatures, error messages
# are compared with it): libraries that check `jax.__version__` see this under the alias.
jax_api_version = "0.10.2"
jax_api_version_info = tuple(int(part) for part in jax_api_version.split("."))
