"""DLPack interchange (``jax.dlpack``): ``from_dlpack`` makes an openjax Array
from any object with ``__dlpack__`` (NumPy, PyTorch CPU tensors, openjax
Arrays); openjax Arrays export themselves through ``Array.__dlpack__``."""
from openjax._src.api.misc import from_dlpack, is_supported_dtype  # noqa: F401

__all__ = ["from_dlpack", "is_supported_dtype"]
