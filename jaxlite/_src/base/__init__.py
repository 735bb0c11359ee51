"""The base layer: configuration, errors, dtypes and their promotion, pytrees, printing,
and the small utilities every layer above uses. Nothing here imports the rest of jaxlite."""
