"""The core layer: abstract values, primitives, traces and tracers, jaxprs (``core.py``),
the Array (``array.py``), Python scalar types, typed PRNG keys and state types. It imports
only the base layer."""
