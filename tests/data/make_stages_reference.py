"""Record what JAX 0.10.2's stages report (stages_cases.py) as
tests/data/stages_reference.json. Run with the reference venv:

    /work/jaxref/bin/python tests/data/make_stages_reference.py
"""
from record_report import write_report

write_report("stages_cases", "stages_reference.json")
