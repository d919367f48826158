"""Write expected.json: cases.py's programs under JAX 0.10.2 on 4 CPU devices.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 /tmp/jaxvenv/bin/python generate.py
"""
import json
import os
import pathlib
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

import jax  # noqa: E402 - after XLA_FLAGS
import cases  # noqa: E402

(HERE / "expected.json").write_text(json.dumps(
    {"printed": cases.cases(jax), "values": cases.values(jax)}, indent=1, sort_keys=True) + "\n")
