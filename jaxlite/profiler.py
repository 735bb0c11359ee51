"""``jax.profiler``: traces, device memory profiles, and jaxlite's statistics of jitted
functions (``report``)."""
from jaxlite._src.profile_data import ProfileData, ProfileEvent, ProfilePlane
from jaxlite._src.profiler import (
    ProfileOptions, StepTraceAnnotation, TraceAnnotation, annotate_function,
    device_memory_profile, register_subprocess, save_device_memory_profile, start_server,
    start_trace, stop_server, stop_trace, trace, report, FunctionStats)
