import os

# Tests run with JAX's defaults (x64 off) unless a test opts in.
os.environ.pop("JAX_ENABLE_X64", None)
