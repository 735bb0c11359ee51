"""``jax.interpreters.batching``: vmap rules of primitives.

``primitive_batchers`` is jaxlite's own table: ``rule(batched_args, batch_dims, **params)
-> (out, out_dims)``, a batch dim being an int or None (``not_mapped``), run with the
enclosing trace current and called only when some operand is batched.
``fancy_primitive_batchers`` rules take the mapped axis first
(``rule(axis_data, batched_args, batch_dims, **params)``; ``axis_data.size``,
``axis_data.name``); ``axis_primitive_batchers`` takes JAX's older form of them,
``rule(axis_size, axis_name, trace_type, batched_args, batch_dims, **params)``.
"""
from jaxlite._src.transforms.batching import (
    AxisData as AxisData,
    BatchTrace as BatchTrace,
    BatchTracer as BatchTracer,
    axis_primitive_batchers as axis_primitive_batchers,
    bdim_at_front as bdim_at_front,
    broadcast as broadcast,
    defbroadcasting as defbroadcasting,
    defreducer as defreducer,
    defvectorized as defvectorized,
    fancy_primitive_batchers as fancy_primitive_batchers,
    moveaxis as moveaxis,
    not_mapped as not_mapped,
    primitive_batchers as primitive_batchers,
)
