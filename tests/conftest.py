import os

# Tests run with JAX's defaults (x64 off) unless a test opts in.
os.environ.pop("JAX_ENABLE_X64", None)
# The library compiles every jitted function (with tiered execution). The
# suite interprets jaxprs by default and compiles in dedicated columns and
# tests (the op table's compiled column groups rows into few modules), which
# keeps it inside its time budget; `OPENJAX_EXECUTOR=iree pytest` compiles
# every jit. Tiered execution is tested explicitly (tests/test_tiered.py).
os.environ.setdefault("OPENJAX_EXECUTOR", "interpreter")
os.environ.setdefault("OPENJAX_TIERED_COMPILATION", "0")
# Every jaxpr a transformation builds is type-checked where it is built
# (jax_enable_checks); JAX_ENABLE_CHECKS=0 turns it off to time without it.
os.environ.setdefault("JAX_ENABLE_CHECKS", "1")
