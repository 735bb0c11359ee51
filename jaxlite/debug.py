"""Run-time debugging inside transformed functions (``jax.debug``)."""
from jaxlite._src.debugging import (debug_print as print, debug_callback as callback,
                                    debug_log as log)
from jaxlite._src.lax.callbacks import DebugEffect, OrderedDebugEffect
from jaxlite._src.sharding import (visualize_array_sharding, visualize_sharding,  # noqa: E402
                                   inspect_array_sharding)
from jaxlite._src.debugger import breakpoint  # noqa: E402
