"""``lax.linalg``: the linear-algebra primitives' wrappers (cholesky, eigh,
qr, svd, ...; ``primitives/linalg/``), their algorithm enums, and ``qdwh``.

``cholesky`` and ``eigh`` are several primitives (the input symmetrized,
the factor's triangle kept): eagerly they run as one library program (a
primitive's eager dispatch costs more than its NumPy step: ~90 us for a 3x3
``cholesky`` op by op, LAPACK ~6 us); under a trace they stage JAX's
equations one by one."""
import functools

from openjax._src.lax.qdwh import qdwh
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.primitives.linalg import householder, linalg, linalg_extra
from openjax._src.primitives.linalg.householder import *  # noqa: F401,F403
from openjax._src.primitives.linalg.linalg import *  # noqa: F401,F403
from openjax._src.primitives.linalg.linalg_extra import *  # noqa: F401,F403

__all__ = sorted([*linalg.__all__, *householder.__all__, *linalg_extra.__all__, "qdwh"])

cholesky = eager_program(static_argnames=("symmetrize_input",))(linalg.cholesky)
_eigh_program = eager_program(static_argnames=("lower", "symmetrize_input", "sort_eigenvalues",
                                               "subset_by_index", "implementation"))(linalg.eigh)


@functools.wraps(linalg.eigh)
def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None, implementation=None):
  if subset_by_index is not None:   # a static argument: hashable
    subset_by_index = tuple(int(i) for i in subset_by_index)
  return _eigh_program(x, lower=lower, symmetrize_input=symmetrize_input,
                       sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index,
                       implementation=implementation)

del householder, linalg, linalg_extra
