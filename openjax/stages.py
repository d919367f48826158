"""The ahead-of-time stages of a jitted function (``jax.stages``):
``Wrapped`` (what ``jit`` returns) → ``.trace()`` → ``Traced`` → ``.lower()``
→ ``Lowered`` → ``.compile()`` → ``Compiled``."""
from openjax._src.api.aot import Compiled, Lowered  # noqa: F401
from openjax._src.api.jit import JitWrapped as Wrapped, Traced  # noqa: F401

__all__ = ["Wrapped", "Traced", "Lowered", "Compiled"]
