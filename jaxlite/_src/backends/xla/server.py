"""The compile server's process: ``python -m jaxlite._src.backends.xla.server``.

It reads requests from stdin and writes replies to stdout in frames
(``compile_server.send``/``receive``). First it answers ``("ready", platform)``, or
``("unavailable", reason)`` and exits when no CPU plugin loads. A ``compete`` request is
two frames: where to run (``background.placement``), then an optimised jaxpr and argument
values (``compile_server.request``); the reply, one frame, is ``("ok", result)`` (see
``compile_server.Server.compete``) or ``("error", message)``. It exits at the end of stdin,
when the process that started it closes the pipe or ends.
"""
import importlib
import pickle
import sys
import time
import traceback

import numpy as np

from jaxlite._src.backends import background, compile_server
from jaxlite._src.backends import plugins
from jaxlite._src.base.config import config


def _reply(out, *message):
  compile_server.send(out, [pickle.dumps(message, protocol=5)])


def compete(closed, name, donation, values, warmup, warmup_budget, trials, flags):
  from jaxlite._src.backends import xla
  current = config.values()
  for flag, value in flags.items():
    if flag in current and current[flag] != value:
      config.update(flag, value)
  t0 = time.perf_counter()
  exe = xla.compile(closed, name, donation)
  compile_s = time.perf_counter() - t0
  client = xla.client()
  bufs = [client.put(np.asarray(v)) for v in values]

  def run():
    for out in exe.execute_device(bufs):
      out.block_until_ready()
  compile_server.warm_up(run, warmup, warmup_budget)   # as tiers.Race does here
  times = [compile_server.timed(run) for _ in range(trials)]
  try:
    data = exe.serialize()
  except xla.XlaRuntimeError:   # the caller's process compiles it if XLA wins
    data = None
  return dict(times=times, executable=data, text=exe.text, compile_s=compile_s,
              from_disk_cache=exe.from_disk_cache, call_code=xla.call_code(exe))


def main():
  inp, out = sys.stdin.buffer, sys.stdout.buffer
  sys.stdout = sys.stderr   # a stray print must not reach the replies
  plugin = plugins.find_plugin()
  if plugin is None or plugin.platform != "cpu":
    _reply(out, "unavailable", "no CPU plugin" if plugin is None else
           f"the {plugin.platform} plugin is served in the caller's process")
    return
  from jaxlite._src.backends import xla
  from jaxlite._src.backends.xla import callbacks
  callbacks.sites_allowed = False
  if len(sys.argv) > 1:   # the caller's CPUs: this process may have been started on fewer
    xla.pool_cpus = {int(c) for c in sys.argv[1].split(",")}
  if not xla.is_available():
    _reply(out, "unavailable", xla.unavailable_reason())
    return
  # XLA's compile runs on a thread at the lowest priority, as in the caller's process,
  # and here only on a CPU that has nothing else to run; its trials poll, as callers do
  background.run_in_background()
  background.serve_alone()
  _reply(out, "ready", xla.platform())
  while True:
    # A request is two frames: where to run, which this process moves to before it
    # reads the second (``Server.compete``), then what to compile and time.
    placement = compile_server.receive(inp)
    if placement is None:
      return
    background.keep_process_off(*pickle.loads(placement[0]))   # (the CPU, the CPUs)
    parts = compile_server.receive(inp)
    if parts is None:
      return
    try:
      # the modules whose primitives the request may name, then (closed, donation)
      # pickled on its own, then the rest (``compile_server.request``)
      modules, size = pickle.loads(parts[0])
      program, request = parts[1:1 + size], parts[1 + size:]
      for module in modules:
        if module.startswith("jaxlite._src.") and module not in sys.modules:
          importlib.import_module(module)
      closed, donation = compile_server.loads(program)
      kind, name, *args = compile_server.loads(request)
      if kind != "compete":
        raise ValueError(f"unknown request {kind!r}")
      _reply(out, "ok", compete(closed, name, donation, *args))
    except Exception as e:   # the caller's process races in-process instead
      _reply(out, "error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}")


if __name__ == "__main__":
  main()
