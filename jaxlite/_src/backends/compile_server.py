"""XLA's side of the tier race in a separate process, so that its Python never holds the
caller's GIL.

Under ``auto``, the race's Python (the lowering to StableHLO, the persistent cache, the
executable's set-up, the glue of XLA's warm-up and trials) would take the GIL from the
callers' calls in the caller's process (benchmarks/README, seventh and eighth passes),
so the compile thread sends the optimised jaxpr and the call's argument values to a
server process (``xla/server.py``, started on first use, one per process), which lowers,
compiles (through the persistent cache), warms XLA up and times it there, and answers
with the times and the serialized executable. The caller's process loads the executable
only when XLA has won.

Only the CPU plugin is served: a second process on a GPU would hold a second context.
Everything here falls back to the in-process race (``ServerError``): no plugin, a GPU, a
jaxpr that refers to something the server cannot rebuild (a primitive it does not know,
a function of the user's), the server's death.
"""
from __future__ import annotations

import atexit
import copyreg
import io
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time

from jaxlite._src.core import core
from jaxlite._src.base import tuning
from jaxlite._src.backends import background
from jaxlite._src.base.config import config

config.define("jaxlite_compile_server", True,
              "Under the auto tier policy, compile and time XLA in a separate process, so "
              "that the race never holds the caller's GIL (CPU plugin only).",
              env_var="JAXLITE_COMPILE_SERVER")

_FRAME = struct.Struct("<Q")
# Modules whose names a request may refer to: the server imports nothing of the user's.
_MODULES = frozenset(["builtins", "copyreg", "collections", "functools", "operator", "_codecs",
                      "numpy", "ml_dtypes", "jaxlite"])


def warm_up(run, most: int, budget: float, warm: float = 0.0):
  """Call ``run()`` untimed, ``most`` times at most, while the calls after the first take
  under ``budget`` seconds in all (the first carries one-time costs), and until one after
  the first takes at most ``warm`` seconds (the time it is known to take once warm). The
  race warms XLA up this way in either process (``tiers.Race``, ``xla/server.py``)."""
  spent, runs = 0.0, 0
  while runs < most and spent < budget:
    t0 = time.perf_counter()
    run()
    took = time.perf_counter() - t0
    if runs and took <= warm:
      return
    spent += took if runs else 0.0
    runs += 1


def timed(run) -> float:
  """Seconds one ``run()`` takes: a race trial, in either process."""
  t0 = time.perf_counter()
  run()
  return time.perf_counter() - t0


class ServerError(RuntimeError):
  """The server cannot take this request (or is gone): race in this process instead."""


# ------------------------------------------------------------------ the wire format

def _primitives() -> dict:
  """name -> primitive, for every primitive with a shape rule (one per name)."""
  rules = core.abstract_eval_rules
  if _by_name.get(None) != len(rules):   # primitives defined since: rebuild
    _by_name.clear()
    _by_name.update((p.name, p) for p in list(rules))
    _by_name[None] = len(rules)
  return _by_name


_by_name: dict = {}


def primitive(name: str) -> core.Primitive:
  """The primitive named ``name`` (how a request's primitives are rebuilt)."""
  found = _primitives().get(name)
  if found is None:
    raise pickle.UnpicklingError(f"no primitive named {name!r} in the compile server")
  return found


def _reduce_primitive(p):
  if not getattr(p, "_module", "").startswith("jaxlite.") or _primitives().get(p.name) is not p:
    raise pickle.PicklingError(f"primitive {p.name!r} is not the one of that name that the "
                               "compile server knows")
  return primitive, (p.name,)


def _subclasses(cls):
  for sub in cls.__subclasses__():
    yield sub
    yield from _subclasses(sub)


# Arrays at least this large travel out of band; smaller ones inside the pickle, where a
# part of their own cost more than their copy (a loop unrolled 2000 times has 2000
# scalar constants: 2000 parts to hash and write).
OUT_OF_BAND_BYTES = 4096


def dumps(obj) -> list:
  """``obj`` pickled, primitives by name (the server has the same ones, by import): the
  pickle, then the memory of the arrays of ``OUT_OF_BAND_BYTES`` or more, out of band,
  so that nothing large is copied while the GIL is held (``send`` writes each part, and
  a write releases the GIL)."""
  table = dict(copyreg.dispatch_table)
  table.update((cls, _reduce_primitive) for cls in (core.Primitive, *_subclasses(core.Primitive)))
  out, buffers = io.BytesIO(), []

  def out_of_band(buffer):   # a true result keeps it in the pickle
    raw = buffer.raw()
    if raw.nbytes < OUT_OF_BAND_BYTES:
      return True
    buffers.append(raw)
    return False
  pickler = pickle.Pickler(out, protocol=5, buffer_callback=out_of_band)
  pickler.dispatch_table = table
  pickler.dump(obj)
  return [out.getbuffer(), *buffers]


class _Unpickler(pickle.Unpickler):
  def find_class(self, module, name):
    if module.split(".", 1)[0] not in _MODULES:
      raise pickle.UnpicklingError(f"{module}.{name} is outside what the compile server "
                                   "imports")
    return super().find_class(module, name)


def loads(parts):
  """What ``dumps`` wrote; names outside jaxlite, NumPy and the standard containers are
  refused, so that the server never imports the user's modules."""
  return _Unpickler(io.BytesIO(parts[0]), buffers=parts[1:]).load()


def send(stream, parts):
  """Write one frame: its number of parts, then each part's length and bytes."""
  stream.write(_FRAME.pack(len(parts)))
  for part in parts:
    stream.write(_FRAME.pack(memoryview(part).nbytes))
    stream.write(part)
  stream.flush()


def receive(stream) -> list | None:
  """The next frame's parts (bytes), or None at the end of the stream."""
  def read(size):
    data = stream.read(size)
    if len(data) < size:
      raise EOFError
    return data
  try:
    (count,) = _FRAME.unpack(read(_FRAME.size))
    return [read(_FRAME.unpack(read(_FRAME.size))[0]) for _ in range(count)]
  except EOFError:
    return None


# ------------------------------------------------------------------ the client side

class Server:
  """A running compile server: one request at a time (the compile thread's)."""
  START_TIMEOUT = tuning.SERVER_START_TIMEOUT

  def __init__(self):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    self.pid = os.getpid()   # a forked child must start its own
    self.xla_flags = os.environ.get("XLA_FLAGS")   # what its XLA reads, once
    self.lock = threading.Lock()   # held from a request's ``send`` to its ``reply``
    self.owed = False   # whether a request was sent whose answer ``reply`` has not read
    # the CPUs of the process it serves, which XLA's pools there are sized for
    cpus = ",".join(map(str, sorted(background.process_cpus())))
    self.process = subprocess.Popen(
        [sys.executable, "-m", "jaxlite._src.backends.xla.server", cpus], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, close_fds=True)
    # Bytes a request may take without waiting for the server to read them: the pipe's
    # capacity, widened where Linux allows (``send`` without ``block``).
    self.room = _widen_pipe(self.process.stdin.fileno()) - 4096
    if os.name == "posix" and not select.select([self.process.stdout], [], [],
                                                  self.START_TIMEOUT)[0]:
      self.process.kill()
      self.process.wait()
      raise ServerError(f"the compile server did not start within {self.START_TIMEOUT} s")
    hello = self._receive()
    if hello[0] != "ready":
      self.close()
      raise ServerError(hello[1])

  def _receive(self):
    parts = receive(self.process.stdout)
    if parts is None:
      raise ServerError(f"the compile server ended (exit status {self.process.poll()})")
    return pickle.loads(parts[0])   # written by our own server

  def compete(self, request: list) -> dict:
    """Compile, warm up and time in the server what ``request`` (made by ``request``)
    asks for, the server's threads kept off the CPU that this thread keeps off
    (``background.placement``): ``send``, then ``reply``.

    Returns a dict: ``times`` (seconds, ``trials`` of them), ``executable`` (serialized,
    or None when the plugin cannot serialize it), ``text`` (StableHLO), ``compile_s``
    (the server's lowering and compile, or cache load), ``from_disk_cache`` and
    ``call_code`` (``xla.call_code``: the executable's dispatch, compiled there).

    Raises
    ------
    ServerError
      The server failed on the request, or it is gone.
    """
    self.send(request)
    return self.reply()

  def send(self, request: list, placement=None, block: bool = True) -> bool:
    """Send ``request``, to run where ``placement`` says (``background.placement``'s
    pair; default: this thread's). The server is held for it until ``reply``, which any
    thread may call, reads the answer. With ``block`` False, nothing is sent (False) while
    another request holds the server, or where the pipe would have to wait for the server
    to read it (``room``).

    Raises
    ------
    ServerError
      The XLA flags changed, the process is exiting, or the server is gone.
    """
    if os.environ.get("XLA_FLAGS") != self.xla_flags:
      raise ServerError("XLA_FLAGS changed since the compile server started")
    if not block and sum(memoryview(p).nbytes for p in request) > self.room:
      return False
    if not self.lock.acquire(block):
      return False
    # Where to run goes first, in a frame of its own, so that the server moves off the
    # caller's CPU (which the caller may have moved to) before it reads a large request
    # there (benchmarks/README.md, fourteenth pass).
    where = [pickle.dumps(placement or background.placement(), protocol=5)]
    try:
      if exiting:   # (checked under the lock that shut_down looks at)
        raise ServerError("the process is exiting")
      send(self.process.stdin, where)
      send(self.process.stdin, request)
    except (OSError, ValueError) as e:   # a closed pipe
      self.lock.release()
      raise ServerError(f"the compile server is gone: {e}") from None
    except ServerError:
      self.lock.release()
      raise
    self.owed = True
    return True

  def reply(self) -> dict:
    """The server's answer to the request ``send`` sent (see ``compete``); frees it."""
    self.owed = False
    try:
      reply = self._receive()
    except (OSError, ValueError) as e:   # a closed pipe
      raise ServerError(f"the compile server is gone: {e}") from None
    finally:
      self.lock.release()
    if reply[0] != "ok":
      raise ServerError(reply[1])
    return reply[1]

  def close(self):
    try:
      self.process.stdin.close()
    except OSError:
      pass
    try:
      self.process.wait(timeout=1)
    except subprocess.TimeoutExpired:   # still compiling: end it, and reap it, so that
      self.process.kill()               # Popen does not warn that it is still running
      self.process.wait()
    self.process.stdout.close()


def _widen_pipe(fd) -> int:
  """The capacity in bytes of the pipe ``fd``, first made 1 MiB where Linux allows."""
  try:
    import fcntl
    return fcntl.fcntl(fd, 1031, 1 << 20)   # F_SETPIPE_SZ: the capacity it set
  except (ImportError, OSError):
    return 1 << 16 if sys.platform.startswith("linux") else 4096


class Program:
  """A jaxpr and its donation pickled for the server (``dumps``), with the jaxlite modules
  loaded when it was made, whose primitives it may name (``_modules``). ``tiers.Probe``
  makes it once per signature, for its request and its lost-race key.

  Raises
  ------
  ServerError
    Something in it cannot be sent (the server could not rebuild it).
  """
  __slots__ = ("parts", "modules")

  def __init__(self, closed, donation):
    try:
      self.parts = dumps((closed, donation))
    except Exception as e:   # from any object's __reduce__
      raise ServerError(f"cannot send this jaxpr to the compile server: {e}") from None
    self.modules = _modules()


def request(closed, name, donation, values, warmup, warmup_budget, trials,
            program=None) -> list:
  """A ``Server.compete`` request: compile ``closed`` (with ``donation``), warm it up
  (``warm_up``'s ``warmup`` and ``warmup_budget``) and time it ``trials`` times on
  ``values``. ``program``, when given, is ``Program(closed, donation)`` already made,
  sent as it is (the race's is: ``tiers.Probe.prepare``).

  The race makes it on the caller's thread, in the call that earned the race: pickling
  holds the GIL, and on the compile thread it took the GIL from the next call in turns.

  Raises
  ------
  ServerError
    Something in it cannot be sent (the server could not rebuild it).
  """
  program = program or Program(closed, donation)
  try:
    return [pickle.dumps((program.modules, len(program.parts)), protocol=5),
            *program.parts, *dumps(("compete", name, values, warmup, warmup_budget, trials,
                                    _flags()))]
  except Exception as e:   # from any object's __reduce__
    raise ServerError(f"cannot send these values to the compile server: {e}") from None


def _modules() -> tuple:
  """The jaxlite modules loaded here: the server loads them before it reads a request,
  so that it knows every primitive the request may name."""
  if _loaded[0] != len(sys.modules):
    _loaded[:] = len(sys.modules), tuple(m for m in list(sys.modules)
                                        if m.startswith("jaxlite._src."))
  return _loaded[1]


_loaded = [0, ()]   # len(sys.modules) when _modules last looked, and what it found


def _flags() -> dict:
  """The config values the server takes over (it reads its own environment at start)."""
  return {name: value for name, value in config.values().items()
          if value is None or type(value) in (bool, int, float, str)}


_server = None
_failure = None   # why the server is not used in this process
_lock = threading.Lock()


def server() -> Server | None:
  """This process's compile server, started on first use; None where it is not used: not
  wanted (``jaxlite_compile_server``), failed to start, or ended (it is not restarted)."""
  global _server, _failure
  if not config.jaxlite_compile_server:
    return None
  s = running()
  if s is not None:
    return s
  with _lock:
    if _server is not None and _server.pid != os.getpid():
      _server, _failure = None, None   # forked from the process that started it
    elif _server is not None and _server.process.poll() is not None:
      _server, _failure = None, "the compile server ended"
    if _server is None and _failure is None:
      try:
        _server = Server()
      except (OSError, ServerError) as e:
        _failure = str(e)
    return _server


def running() -> Server | None:
  """This process's compile server if it has started and is running (None otherwise)."""
  s = _server
  if s is not None and s.pid == os.getpid() and s.process.poll() is None:
    return s
  return None


def wanted() -> bool:
  """Whether ``server()`` will be asked for a server: it is wanted and has not failed."""
  return bool(config.jaxlite_compile_server) and _failure is None


def failure() -> str | None:
  """Why ``server()`` gave None (None when it did not or was not asked)."""
  return _failure


exiting = False   # set by shut_down: a request cut short is not raced here instead


def shut_down():
  """At exit: end a request in progress (it raises ``ServerError``) by ending the server,
  and use none from now on."""
  global _failure, exiting
  with _lock:
    exiting, _failure = True, "the process is exiting"
    s = _server
  if s is not None and s.pid == os.getpid() and s.lock.locked() and s.process.poll() is None:
    s.process.kill()


@atexit.register   # registered at import, so it runs after the compile thread has stopped
def _close():
  if _server is not None and _server.pid == os.getpid():
    _server.close()
