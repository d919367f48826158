"""The ``lax`` surface: every primitive wrapper, gathered from the family
modules (library code imports ``openjax._src.lax as lax``)."""
from openjax._src.primitives.base.structural import *  # noqa: F401,F403
from openjax._src.primitives.base.convert import *  # noqa: F401,F403
from openjax._src.primitives.base.ad_util import stop_gradient  # noqa: F401
from openjax._src.primitives.dot_conv.dot import *  # noqa: F401,F403
from openjax._src.primitives.base.convert import _convert_element_type  # noqa: F401
from openjax._src.primitives.elementwise.logic import *  # noqa: F401,F403
from openjax._src.primitives.elementwise.arithmetic import *  # noqa: F401,F403
from openjax._src.primitives.elementwise.transcendental import *  # noqa: F401,F403
from openjax._src.primitives.index.gather_scatter import *  # noqa: F401,F403
from openjax._src.primitives.index.dynamic_slicing import *  # noqa: F401,F403
from openjax._src.primitives.reduce.reductions import *  # noqa: F401,F403
from openjax._src.primitives.shape.shape import *  # noqa: F401,F403
from openjax._src.primitives.sort.sort import *  # noqa: F401,F403
from openjax._src.primitives.elementwise.special import *  # noqa: F401,F403
from openjax._src.primitives.dot_conv.conv import *  # noqa: F401,F403
from openjax._src.lax import linalg  # noqa: F401 - ``lax.linalg``
from openjax._src.primitives.fft.fft import *  # noqa: F401,F403
from openjax._src.control.closed_call import *  # noqa: F401,F403
from openjax._src.control.cond import *  # noqa: F401,F403
from openjax._src.control.while_loop import *  # noqa: F401,F403
# lax.while_loop threads mutable array references (after the control layer's name).
from openjax._src.lax.stateful_loops import while_loop  # noqa: F401,E402
from openjax._src.control.scan import *  # noqa: F401,F403
# Eager calls of the control flow operations as cached programs (after the
# control layer's names, which they wrap).
from openjax._src.lax.eager_control import *  # noqa: F401,F403,E402
from openjax._src.control.reduce_variadic import *  # noqa: F401,F403
from openjax._src.control.reduce_window import *  # noqa: F401,F403
from openjax._src.control.select_and_scatter import select_and_scatter_p  # noqa: F401
from openjax._src.primitives.reduce.reduce_window_monoid import *  # noqa: F401,F403
from openjax._src.primitives.reduce.select_and_gather import *  # noqa: F401,F403
# The traced lowerings of linalg's and fft's primitives are set on import.
from openjax._src.control import fft_lowering, linalg_lowering  # noqa: F401
from openjax._src.control import linalg_schur_lowering  # noqa: F401
from openjax._src.control import linalg_extra_lowering  # noqa: F401
from openjax._src.control import dot_lowering  # noqa: F401 - sets dot_general's lowering
from openjax._src.control import conv_host_lowering  # noqa: F401 - sets conv_general_dilated's lowering
from openjax._src.control import sort_host_lowering  # noqa: F401 - sets sort's lowering
from openjax._src.lax.parallel import *  # noqa: F401,F403
from openjax._src.sharding.api import with_sharding_constraint  # noqa: F401
from openjax._src.primitives.shape.sharding_constraint import sharding_constraint_p  # noqa: F401
from openjax._src.lax.associative_scan import *  # noqa: F401,F403
from openjax._src.primitives.base.ad_util import stop_gradient_p  # noqa: F401
from openjax._src.primitives.shape.stacking import *  # noqa: F401,F403
from openjax._src.primitives.identity.identity_ops import *  # noqa: F401,F403
from openjax._src.primitives.identity.tokens import *  # noqa: F401,F403
from openjax._src.primitives.identity.device_put import device_put_p  # noqa: F401
from openjax._src.lax.extra import *  # noqa: F401,F403
from openjax._src.lax.solves import *  # noqa: F401,F403
from openjax._src.control.linear_solve import linear_solve_p  # noqa: F401
from openjax._src.primitives.sort.approx_top_k import (  # noqa: F401
    approx_max_k, approx_min_k, approx_top_k_p)
from openjax._src.lax.convolution_extra import *  # noqa: F401,F403
from openjax._src.lax.ragged import *  # noqa: F401,F403
from openjax._src.primitives.sort.total_order import *  # noqa: F401,F403
from openjax._src.lax.scaled_dot import *  # noqa: F401,F403
from openjax._src.primitives.random_bits.rng_uniform import *  # noqa: F401,F403
from openjax._src.control import rng_uniform_lowering  # noqa: F401 - sets rng_uniform's lowering
