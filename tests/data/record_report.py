"""What the recording scripts whose cases module has a ``report(jax)`` share: run it on
the real jax and write the JSON the tests compare with. Never imported by the tests."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write_report(cases_module: str, json_name: str):
  """``<cases_module>.report(jax)`` written to ``tests/data/<json_name>``."""
  import jax
  sys.path.insert(0, HERE)
  report = __import__(cases_module).report
  with open(os.path.join(HERE, json_name), "w") as f:
    json.dump({"jax_version": jax.__version__, "report": report(jax)}, f, indent=1,
              sort_keys=True)
    f.write("\n")
