"""Exception classes users can catch (``jax.errors``)."""
from jaxlite._src.base.errors import (JAXTypeError, JAXIndexError, ConcretizationTypeError,
                                 TracerBoolConversionError, TracerIntegerConversionError,
                                 TracerArrayConversionError, UnexpectedTracerError,
                                 NonConcreteBooleanIndexError, KeyReuseError,
                                 JaxRuntimeError, InconclusiveDimensionOperation,
                                 JaxprTypeError)
