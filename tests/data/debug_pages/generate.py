"""Expected outputs of the code of four JAX documentation pages (External
callbacks, Introduction to debugging, Compiled prints and breakpoints, The
checkify transformation), recorded under JAX 0.10.2, each page in a fresh
process:

  /tmp/jaxvenv/bin/python generate.py <path to jax's docs/ directory>

Never imported by the tests."""
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from runner import blocks  # noqa: E402

PAGES = ("external-callbacks.md", "debugging.md", "debugging/print_breakpoint.md",
         "debugging/checkify_guide.md")

docs = pathlib.Path(sys.argv[1])
for page in PAGES:
  out = HERE / (pathlib.Path(page).stem + ".json")
  out.write_text(json.dumps([{"code": c} for c in blocks((docs / page).read_text())]))
  run = subprocess.run([sys.executable, str(HERE / "runner.py"), str(out)], check=True,
                       capture_output=True, text=True)
  cells = json.loads(run.stdout)
  out.write_text(json.dumps(cells, indent=1, ensure_ascii=False) + "\n")
  print(page, len(cells), "blocks,", sum(c["error"] is not None for c in cells), "raise")
