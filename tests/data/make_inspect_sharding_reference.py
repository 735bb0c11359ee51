"""Record what JAX 0.10.2's inspect_array_sharding reports (inspect_sharding_cases.py) as
tests/data/inspect_sharding_reference.json. Run with the reference venv:

    /work/jaxref/bin/python tests/data/make_inspect_sharding_reference.py
"""
from record_report import write_report

write_report("inspect_sharding_cases", "inspect_sharding_reference.json")
