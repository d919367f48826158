"""The standing fuzz test of the jnp namespace (issue 19, item 9): runs
tests/fuzz_jnp.py in a subprocess, so a crash or a hang fails this test
instead of the suite. ``OPENJAX_FUZZ_SECONDS`` caps its time (60 s) and
``OPENJAX_FUZZ_CASES`` its cases (2000): raise both for longer runs, which
find more; ``OPENJAX_FUZZ_SEED`` sets its seed. A failure prints the command
that replays each failing case."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_fuzz_jnp():
  seconds = float(os.environ.get("OPENJAX_FUZZ_SECONDS", "60"))
  seed = int(os.environ.get("OPENJAX_FUZZ_SEED", "0"))
  # A fixed case count keeps CI's verdict independent of the machine's
  # speed (a faster one would reach later cases); longer runs raise both.
  max_cases = int(os.environ.get("OPENJAX_FUZZ_CASES", "2000"))
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(
      [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
  # The fuzzer picks executors per case; jit interprets unless it asks.
  env.update(OPENJAX_EXECUTOR="interpreter", OPENJAX_TIERED_COMPILATION="0")
  cmd = [sys.executable, "-W", "ignore", str(ROOT / "tests" / "fuzz_jnp.py"),
         "--seconds", str(seconds), "--seed", str(seed), "--max-cases", str(max_cases)]
  try:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 300, cwd=ROOT,
                       env=env)
  except subprocess.TimeoutExpired as e:
    raise AssertionError(f"fuzz_jnp hung (no result {seconds + 300:.0f} s after start); "
                         f"its last output:\n{(e.stdout or b'')[-3000:]!r}") from None
  summary = r.stdout.strip().splitlines()
  assert r.returncode == 0, (
      f"fuzz_jnp failed (exit {r.returncode}); replay a case with "
      f"`python tests/fuzz_jnp.py --seed {seed} --case N -v`:\n"
      + "\n".join(summary[-40:]) + "\n" + r.stderr[-3000:])
  assert summary and summary[0].startswith("fuzz_jnp:"), r.stdout[-2000:]
  # It checked something: most cases ran and were compared.
  n_cases = int(summary[0].split()[1])
  assert n_cases >= min(50, seconds), summary[0]
