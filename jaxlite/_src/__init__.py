"""jaxlite's implementation, in layers (docs/architecture.md); the public modules re-export it."""
