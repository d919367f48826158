"""Write expected.json: cases.py's cases under JAX 0.10.2 on 2 and 4 CPU
devices (one interpreter per device count).

    /tmp/jaxvenv/bin/python generate.py
"""
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def run(n: int) -> dict:
  os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
  sys.path.insert(0, str(HERE))
  import jax
  import cases
  return {"creation": cases.creation_cases(jax, n), "placement": cases.placement_cases(jax, n),
          "typeof": cases.typeof_cases(jax, n)}


if __name__ == "__main__":
  if len(sys.argv) > 1:
    print(json.dumps(run(int(sys.argv[1]))))
  else:
    expected = {str(n): json.loads(subprocess.run(
        [sys.executable, __file__, str(n)], check=True, capture_output=True, text=True).stdout)
        for n in (2, 4)}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
