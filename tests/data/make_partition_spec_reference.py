"""Record JAX 0.10.2's PartitionSpec behaviour (partition_spec_cases.py) as
tests/data/partition_spec_reference.json. Run with the reference venv:

    /work/jaxref/bin/python tests/data/make_partition_spec_reference.py
"""
from record_report import write_report

write_report("partition_spec_cases", "partition_spec_reference.json")
