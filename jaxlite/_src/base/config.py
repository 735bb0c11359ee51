"""Global configuration flags, as in ``jax.config``.

Every flag is a plain attribute of the single ``config`` object, so hot paths read
it with one attribute lookup (``config.jax_enable_x64``). Flags that change how
values are traced (``jax_enable_x64``) are part of every jit cache key.

Every option is defined here, the backends' too, so ``config.update`` knows each one from
``import jaxlite`` on. A flag whose behaviour lives in a module above (the NaN checks,
the persistent cache) is read there, or watched with ``config.watch``. Values are checked
as JAX checks them: enum options name their choices, string and float options their
type; boolean options take any value and keep its truth value.
"""
import contextlib
import itertools
import os
import sys
import threading


def _env_bool(name, default):
  value = os.environ.get(name)
  if value is None:
    return default
  return value.strip().lower() in ("1", "true", "yes", "on", "y", "t")


class Config:
  """Holds the flags; ``update`` is the only way to change one."""

  def __init__(self):
    object.__setattr__(self, "_flags", {})
    object.__setattr__(self, "_hooks", {})
    object.__setattr__(self, "_validators", {})
    object.__setattr__(self, "_lock", threading.Lock())
    # replaced by a new object at every update: a cache of results that depend on flag
    # values checks with one identity test that no flag changed since it was filled
    object.__setattr__(self, "generation", object())

  def define(self, name, default, help, env_var=None, parse=None, on_change=None,
             validate=None):
    """Define option ``name``; ``validate(value)`` returns the value to store or raises."""
    if env_var is not None and env_var in os.environ:
      default = parse(os.environ[env_var]) if parse else _env_bool(env_var, default)
    self._flags[name] = help
    if validate is not None:
      self._validators[name] = validate
    if on_change is not None:
      self._hooks[name] = on_change
    object.__setattr__(self, name, default)

  def watch(self, name, on_change):
    """Call ``on_change(value)`` after every ``update`` of ``name`` (one watcher each)."""
    self.read(name)
    self._hooks[name] = on_change

  def update(self, name, value):
    """Set flag ``name`` to ``value`` (``jax.config.update`` semantics)."""
    if name not in self._flags:
      raise AttributeError(
          f"Unrecognized config option: {name}. Known options: "
          f"{', '.join(sorted(self._flags))}.")
    validate = self._validators.get(name)
    if validate is not None:
      value = validate(value)
    with self._lock:
      object.__setattr__(self, name, value)
      object.__setattr__(self, "generation", object())
      hook = self._hooks.get(name)
    if hook is not None:
      hook(value)

  def new_generation(self):
    """Make every cache filled under the current ``generation`` check again, after a
    change the hot paths must see that is no flag (a profiler trace starting)."""
    with self._lock:
      object.__setattr__(self, "generation", object())

  @property
  def x64_enabled(self) -> bool:
    """Whether 64-bit types are enabled (JAX's read-only spelling of ``jax_enable_x64``)."""
    return self.jax_enable_x64

  def read(self, name):
    if name not in self._flags:
      raise AttributeError(f"Unrecognized config option: {name}")
    return getattr(self, name)

  def __setattr__(self, name, value):
    raise AttributeError(
        f"Config flags are set with config.update({name!r}, value), not by assignment.")

  @contextlib.contextmanager
  def override(self, name, value):
    """Temporarily set a flag (process-wide) inside a ``with`` block."""
    old = self.read(name)
    self.update(name, value)
    try:
      yield
    finally:
      self.update(name, old)

  def values(self):
    return {name: getattr(self, name) for name in self._flags}

  def parse_flags_with_absl(self):
    """Set options from the ``--jax...`` command-line arguments before the first ``--``
    (``jax.config.parse_flags_with_absl``), once per process, as JAX does through absl:
    ``--jax_enable_x64``, ``--jax_enable_x64=false``, ``--jax_platforms=cpu``. Arguments
    naming no option are ignored (absl's ``known_only``); a value of the wrong type raises
    ValueError. jaxlite parses them itself: absl is not needed."""
    if _absl_parsed[0]:
      return
    jax_args = [a for a in itertools.takewhile(lambda a: a != "--", sys.argv[1:])
                if a.startswith("--jax")]
    for arg in jax_args:
      name, has_value, text = arg[2:].partition("=")
      if name not in self._flags:
        continue
      self.update(name, _parse_flag(name, getattr(self, name), text if has_value else None))
    _absl_parsed[0] = True
    _mark_absl_parsed(jax_args)


def _mark_absl_parsed(jax_args):
  """Where absl is installed, have it parse the ``--jax`` arguments as JAX's call does
  (absl knows none of them): its flags then count as parsed, which absltest's
  ``create_tempdir`` (``--test_tmpdir``) needs in tests run by pytest."""
  try:
    from absl import flags
  except ImportError:
    return
  if not flags.FLAGS.is_parsed():
    flags.FLAGS(["", *jax_args], known_only=True)


_absl_parsed = [False]   # parse_flags_with_absl has run (JAX's already_configured_with_absl)


def _parse_flag(name, current, text):
  """A command-line value for option ``name``, typed as its current value is (absl's
  boolean, integer, float and string flags)."""
  if isinstance(current, bool):
    if text is None or text.lower() in ("true", "t", "1"):
      return True
    if text.lower() in ("false", "f", "0"):
      return False
    raise ValueError(f"Illegal value for flag --{name}: {text!r} is not a boolean")
  if text is None:
    raise ValueError(f"Flag --{name} must have a value other than None.")
  try:
    if isinstance(current, int):
      return int(text)
    if isinstance(current, float):
      return float(text)
  except ValueError:
    raise ValueError(f"Illegal value for flag --{name}: {text!r}") from None
  return text


def _enum(*choices, allow_none=False):
  """Validator of an option that takes one of ``choices`` (JAX's enum_state)."""
  def validate(value):
    if (value is None and allow_none) or value in choices:
      return value
    listed = f"{'None or ' if allow_none else ''}in {list(choices)}"
    raise ValueError(f"new enum value must be {listed}, got {value} of type {type(value)}.")
  return validate


def _optional(kind, types, end):
  """Validator of an option that takes None or a value of ``types`` (JAX's string_state,
  float_state)."""
  def validate(value):
    if value is None or (isinstance(value, types) and not isinstance(value, bool)):
      return value
    raise ValueError(f"new {kind} config value must be None or of type {types[0].__name__}, "
                     f"got {value} of type {type(value)}{end}")
  return validate


# (JAX ends the string message with a period and the float one without.)
_string = _optional("string", (str,), ".")
_float = _optional("float", (float, int), "")


def _truth(value):
  return bool(value)


def _env_float(text):
  return float(text)


config = Config()


class ThreadFlag(threading.local):
  """A flag, False until ``with flag.raised():`` sets it in this thread for the block."""
  on = False

  @contextlib.contextmanager
  def raised(self):
    before, self.on = self.on, True
    try:
      yield
    finally:
      self.on = before


# Set in a thread while jaxlite traces code of its own that stands for XLA's or LAPACK's
# internals (``own_code``): there the user's numpy promotion options do not apply.
_own_code = ThreadFlag()


def own_code():
  """Trace jaxlite's own implementation code in this ``with`` block, in this thread: the
  decompositions that lowering rules write with ``jnp`` (LU, SVD, ...).

  JAX computes those in LAPACK or inside XLA, where ``jax_numpy_rank_promotion`` and
  ``jax_numpy_dtype_promotion``, checks of the user's own ``jnp`` code, never reach, so
  here they read as their defaults ('allow', 'standard'). Thread-local: a lowering runs
  on the compile thread while the user's thread traces under the user's options."""
  return _own_code.raised()


def numpy_rank_promotion() -> str:
  """``jax_numpy_rank_promotion`` as the code being traced sees it (``own_code``)."""
  mode = config.jax_numpy_rank_promotion
  return "allow" if mode != "allow" and _own_code.on else mode


def numpy_dtype_promotion() -> str:
  """``jax_numpy_dtype_promotion`` as the code being traced sees it (``own_code``)."""
  mode = config.jax_numpy_dtype_promotion
  return "standard" if mode != "standard" and _own_code.on else mode

config.define("jax_enable_x64", False, "Enable 64-bit dtypes (int64, float64, complex128).",
              env_var="JAX_ENABLE_X64", validate=_truth)
config.define("jax_numpy_dtype_promotion", "standard",
              "'standard' follows JAX's promotion lattice; 'strict' forbids implicit promotion.",
              env_var="JAX_NUMPY_DTYPE_PROMOTION", parse=str,
              validate=_enum("standard", "strict"))
config.define("jax_disable_jit", False, "Run jitted functions eagerly, op by op.",
              env_var="JAX_DISABLE_JIT", validate=_truth)
config.define("jax_explain_cache_misses", False,
              "Report every jit retrace as a warning instead of a log record.",
              env_var="JAX_EXPLAIN_CACHE_MISSES", validate=_truth)
config.define("jax_log_compiles", False, "Log every compilation with its duration.",
              env_var="JAX_LOG_COMPILES", validate=_truth)

# Checks and debugging.
config.define("jax_debug_nans", False,
              "Raise FloatingPointError naming the primitive that produced a NaN (eager ops; "
              "a jitted function with a NaN output is re-run op by op to find it).",
              env_var="JAX_DEBUG_NANS", validate=_truth)
config.define("jax_debug_infs", False, "As jax_debug_nans, for infinities.",
              env_var="JAX_DEBUG_INFS", validate=_truth)
config.define("jax_numpy_rank_promotion", "allow",
              "Broadcasting operands of different ranks (both not scalars): 'allow', 'warn' "
              "(a UserWarning) or 'raise' (a ValueError).",
              env_var="JAX_NUMPY_RANK_PROMOTION", parse=str,
              validate=_enum("allow", "warn", "raise"))
config.define("jax_enable_checks", False,
              "Check internal invariants while tracing (jaxlite's checks are always on).",
              env_var="JAX_ENABLE_CHECKS", validate=_truth)
config.define("jax_check_tracer_leaks", False,
              "Look for leaked tracers (jaxlite raises UnexpectedTracerError on every use of a "
              "leaked tracer, so the flag adds nothing).",
              env_var="JAX_CHECK_TRACER_LEAKS", validate=_truth)
config.define("jax_traceback_filtering", "auto",
              "How much of jaxlite's internal frames tracebacks show (see traceback_util).",
              env_var="JAX_TRACEBACK_FILTERING", parse=str,
              validate=_enum("off", "tracebackhide", "remove_frames", "quiet_remove_frames",
                             "auto"))

# Numerics, random numbers and platforms.
_MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
config.define("jax_default_matmul_precision", None,
              "Default precision of matmuls and convolutions without an explicit precision "
              "(jaxlite computes them at full precision on CPU, as XLA's CPU backend does).",
              env_var="JAX_DEFAULT_MATMUL_PRECISION", parse=str,
              validate=_enum(*_MATMUL_PRECISIONS, allow_none=True))
config.define("jax_default_prng_impl", "threefry2x32",
              "The PRNG of jax.random (jaxlite implements threefry2x32; keys of the others "
              "are refused where they are made).",
              env_var="JAX_DEFAULT_PRNG_IMPL", parse=str,
              validate=_enum("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg",
                             "philox2x32", "philox4x32"))
config.define("jax_threefry_partitionable", True,
              "Generate random bits so that sharded and unsharded results agree (jaxlite "
              "generates them as JAX does with this flag on).",
              env_var="JAX_THREEFRY_PARTITIONABLE", validate=_truth)
config.define("jax_high_dynamic_range_gumbel", False,
              "jax.random.gumbel's default mode is 'high' (two draws per sample, so that "
              "events of low probability come out with more precision), not 'low'.",
              env_var="JAX_HIGH_DYNAMIC_RANGE_GUMBEL", validate=_truth)
config.define("jax_enable_custom_prng", False,
              "jax.random.PRNGKey returns a typed key (``key<fry>``), as jax.random.key does.",
              env_var="JAX_ENABLE_CUSTOM_PRNG", validate=_truth)
config.define("jax_legacy_prng_key", "allow",
              "A raw uint32 key passed to a jax.random function: 'allow', 'warn' (a "
              "UserWarning) or 'error' (a ValueError).",
              env_var="JAX_LEGACY_PRNG_KEY", parse=str, validate=_enum("allow", "warn", "error"))


def _no_key_reuse_checks(value):
  if _truth(value):
    raise NotImplementedError(
        "jax_debug_key_reuse=True: jaxlite does not check random keys for reuse. Leave the "
        "flag False, and split a key (jax.random.split) before each use.")
  return False


config.define("jax_debug_key_reuse", False,
              "Check that no random key is used twice (jaxlite has no such checker: only "
              "False is accepted).", validate=_no_key_reuse_checks)
config.define("jax_softmax_custom_jvp", False,
              "jax.nn.softmax differentiates by its own rule (a custom_jvp) instead of its "
              "formula's.", env_var="JAX_SOFTMAX_CUSTOM_JVP", validate=_truth)
config.define("jax_no_tracing", False,
              "Raise RuntimeError when a jitted function would be traced (a cache miss).",
              validate=_truth)
config.define("jax_platforms", None,
              "Comma-separated platforms to initialize, in order of preference ('cpu', 'cuda', "
              "'gpu'); None picks the available ones.",
              env_var="JAX_PLATFORMS", parse=str, validate=_string)
config.define("jax_platform_name", None,
              "Older name of jax_platforms: the platform of the default backend.",
              env_var="JAX_PLATFORM_NAME", parse=str, validate=_string)

# Options JAX has whose effect jaxlite either reproduces (named where it is read) or,
# where it concerns something jaxlite has not (jax2tf, several processes, pvary), keeps
# only as a value that can be set and read, so programs that set them run unchanged.
config.define("jax_allow_f16_reductions", True,
              "If False, `reduce_sum` on `f16` or `bf16` inputs will raise an error.",
              env_var="JAX_ALLOW_F16_REDUCTIONS", validate=_truth)
config.define("jax_no_execution", False,
              "Disallow JAX executions (a jitted function called raises RuntimeError).",
              env_var="JAX_NO_EXECUTION", validate=_truth)
config.define("jax_array_garbage_collection_guard", None,
              "What happens when a jax.Array is freed by the garbage collector rather than "
              "by reference counting: 'allow', 'log' or 'fatal' (jaxlite frees arrays as "
              "Python objects, so it only keeps the value).",
              env_var="JAX_ARRAY_GARBAGE_COLLECTION_GUARD", parse=str,
              validate=_enum("allow", "log", "fatal", allow_none=True))
config.define("jax_auto_pcast", True,
              "Insert `pvary` automatically to match varying manual axes (jaxlite's "
              "shard_map does not type manual axes, so it keeps only the value).",
              env_var="JAX_AUTO_PCAST", validate=_truth)
config.define("jax_remove_size_one_mesh_axis_from_type", False,
              "Remove mesh axes of size 1 from array types' shardings.",
              env_var="JAX_REMOVE_SIZE_ONE_MESH_AXIS_FROM_TYPE", validate=_truth)
config.define("jax_thread_guard", False,
              "Raise if a multi-process operation is called from another thread than the "
              "guard's (jaxlite runs one process, so it only keeps the value).",
              env_var="JAX_THREAD_GUARD", validate=_truth)
config.define("jax2tf_associative_scan_reductions", False,
              "How jax2tf lowers cumulative reductions (jaxlite has no jax2tf; the value is "
              "kept).", env_var="JAX2TF_ASSOCIATIVE_SCAN_REDUCTIONS", validate=_truth)


class UserContext:
  """A value that jit's caches key on, set in a ``with`` block (``jax.make_user_context``).

  Each one is a config option of its own (``user_context_<n>``), so ``with`` blocks and
  threads treat it as every other option; ``lax.base.trace_context`` reads them all.
  """
  _made = itertools.count()

  def __init__(self, default_value=None):
    self._name = f"user_context_{next(self._made)}"
    self._global = default_value   # its value outside every `with` block
    config.define(self._name, default_value, "A jax.make_user_context value.")
    user_contexts.append(self._name)

  @property
  def value(self):
    return config.read(self._name)

  def get_global(self):
    return self._global

  def set_global(self, new_value):
    self._global = new_value
    config.update(self._name, new_value)

  def __call__(self, new_value):
    return config.override(self._name, new_value)


user_contexts: list = []   # the options UserContext made, in the order they were made


def make_user_context(default_value=None):
  """Make a context whose value jit's caches key on (``jax.make_user_context``).

  Parameters
  ----------
  default_value : hashable, optional
    Its value outside any ``with`` block.

  Returns
  -------
  UserContext
    Called with a value, a context manager that sets it inside its ``with`` block; a
    jitted function called with another value is traced and compiled again.
  """
  return UserContext(default_value)


# Compilation caches. The persistent cache keeps XLA executables on disk across processes.
config.define("jax_compilation_cache_dir", None,
              "Directory of the persistent compile cache (jaxlite's default, when None: "
              "$XDG_CACHE_HOME/jaxlite/xla or ~/.cache/jaxlite/xla).",
              env_var="JAX_COMPILATION_CACHE_DIR", parse=str, validate=_string)
config.define("jax_persistent_cache_min_compile_time_secs", 0.0,
              "Only executables that took at least this long to compile are written to the "
              "persistent cache.",
              env_var="JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", parse=_env_float,
              validate=_float)
config.define("jaxlite_persistent_cache", True,
              "Keep compiled XLA executables on disk so later processes skip compiling.",
              env_var="JAXLITE_PERSISTENT_CACHE", validate=_truth)
config.define("jaxlite_cache_dir", None,
              "jaxlite's older name of jax_compilation_cache_dir (used when that is None).",
              env_var="JAXLITE_CACHE_DIR", parse=str, validate=_string)
config.define("jaxlite_cache_max_bytes", 1 << 30, "Size bound of the persistent cache.",
              env_var="JAXLITE_CACHE_MAX_BYTES", parse=int)


def _threads(value):
  if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
    return value
  raise ValueError(f"jaxlite_tier0_threads must be a whole number of at least 1, got {value!r}.")


# Tier 0 (the NumPy tier) runs large elementwise regions in cache-sized blocks, on threads.
config.define("jaxlite_tier0_blocks", True,
              "Tier 0 evaluates runs of elementwise operations on large arrays in cache-sized "
              "blocks (read when a function is compiled; the bits are the same either way).",
              env_var="JAXLITE_TIER0_BLOCKS", validate=_truth)
def _usable_cpus() -> int:
  """The CPUs this process may run on (``taskset``, a container's cpuset), as XLA sizes
  its pools: ``os.cpu_count`` counts the machine's."""
  if hasattr(os, "sched_getaffinity"):
    return len(os.sched_getaffinity(0))
  return os.cpu_count() or 1


config.define("jaxlite_tier0_threads", min(_usable_cpus(), 8),
              "Threads that share tier 0's blocks (1: the calling thread alone).",
              env_var="JAXLITE_TIER0_THREADS", parse=lambda text: _threads(int(text)),
              validate=_threads)
