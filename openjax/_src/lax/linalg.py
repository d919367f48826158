"""``lax.linalg``: the linear-algebra primitives' wrappers (cholesky, eigh,
qr, svd, ...; ``primitives/linalg/``), their algorithm enums, and ``qdwh``."""
from openjax._src.lax.qdwh import qdwh
from openjax._src.primitives.linalg import householder, linalg, linalg_extra
from openjax._src.primitives.linalg.householder import *  # noqa: F401,F403
from openjax._src.primitives.linalg.linalg import *  # noqa: F401,F403
from openjax._src.primitives.linalg.linalg_extra import *  # noqa: F401,F403

__all__ = sorted([*linalg.__all__, *householder.__all__, *linalg_extra.__all__, "qdwh"])
del householder, linalg, linalg_extra
