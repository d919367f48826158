"""``openjax.sharding``: meshes and shardings (``jax.sharding``)."""
from openjax._src.core.mesh import (  # noqa: F401
    AbstractDevice, AbstractMesh, AxisType, Mesh, get_abstract_mesh, use_abstract_mesh)
from openjax._src.core.sharding import (  # noqa: F401
    ManualAxisType, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
    make_single_device_sharding)
from openjax._src.sharding.api import (  # noqa: F401
    auto_axes, explicit_axes, get_mesh, reshard, set_mesh)
