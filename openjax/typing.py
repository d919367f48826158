"""Type annotations for openjax programs (``jax.typing``).

``ArrayLike``: anything jax.numpy functions accept as an array (an Array, a
NumPy array or scalar, a Python bool/int/float/complex). ``DTypeLike``:
anything accepted as a dtype (a name, a NumPy dtype or scalar type, an
object with a ``dtype`` attribute).
"""
from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from openjax._src.core import Array


class _SupportsDType(Protocol):
  @property
  def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, _SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
