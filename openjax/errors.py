"""Errors raised by openjax (``jax.errors``)."""
from openjax._src.errors import (  # noqa: F401
    ConcretizationTypeError, JAXIndexError, JAXTypeError, JaxRuntimeError, KeyReuseError,
    NonConcreteBooleanIndexError, TracerArrayConversionError, TracerBoolConversionError,
    TracerIntegerConversionError, UnexpectedTracerError, InconclusiveDimensionOperation)
from openjax._src.core.jaxpr import JaxprTypeError  # noqa: F401
