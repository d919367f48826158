"""``jax.example_libraries.stax``: neural-network layers as ``(init_fun, apply_fun)`` pairs.

``init_fun(rng, input_shape) -> (output_shape, params)`` and
``apply_fun(params, inputs, **kwargs) -> outputs``; the combinators ``serial``,
``parallel`` and ``shape_dependent`` build networks out of layers.
"""
import functools
import math

from openjax._src import lax
from openjax._src.nn import jnp
from openjax._src.nn.activations import (
    elu, gelu, leaky_relu, relu, selu, sigmoid, softplus)
from openjax._src.nn.initializers import glorot_normal, normal, ones, zeros
from openjax._src.nn.normalization import standardize
from openjax._src.nn.softmax import log_softmax, softmax
from openjax._src.random.keys import split
from openjax._src.random.samplers import bernoulli

# The older names tutorials still use.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
  """A dense (fully connected) layer: ``inputs @ W + b``."""
  def init_fun(rng, input_shape):
    output_shape = input_shape[:-1] + (out_dim,)
    k1, k2 = split(rng)
    return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return jnp.dot(inputs, W) + b

  return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, out_chan, filter_shape, input_shape):
  spatial = iter(filter_shape)
  return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
          else next(spatial) for c in rhs_spec]


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
  """A convolution layer with the given ``(lhs, rhs, out)`` dimension specs."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  one = (1,) * len(filter_shape)
  strides = strides or one
  W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

  def init_fun(rng, input_shape):
    kernel_shape = _kernel_shape(rhs_spec, lhs_spec, out_chan, filter_shape, input_shape)
    output_shape = lax.conv_general_shape_tuple(
        input_shape, kernel_shape, strides, padding, dimension_numbers)
    bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
    k1, k2 = split(rng)
    return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                    dimension_numbers=dimension_numbers) + b

  return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
  """A transposed-convolution layer with the given dimension specs."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  one = (1,) * len(filter_shape)
  strides = strides or one
  W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

  def init_fun(rng, input_shape):
    kernel_shape = _kernel_shape(rhs_spec, lhs_spec, out_chan, filter_shape, input_shape)
    output_shape = lax.conv_transpose_shape_tuple(
        input_shape, kernel_shape, strides, padding, dimension_numbers)
    bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
    k1, k2 = split(rng)
    return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return lax.conv_transpose(inputs, W, strides, padding,
                              dimension_numbers=dimension_numbers) + b

  return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
  """Batch normalisation over ``axis`` (statistics of the batch itself, no running mean)."""
  axis = (axis,) if jnp.isscalar(axis) else axis

  def init_fun(rng, input_shape):
    shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
    k1, k2 = split(rng)
    beta = beta_init(k1, shape) if center else ()
    gamma = gamma_init(k2, shape) if scale else ()
    return input_shape, (beta, gamma)

  def apply_fun(params, x, **kwargs):
    beta, gamma = params
    expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
    z = standardize(x, axis, epsilon=epsilon)
    if center and scale:
      return gamma[expand] * z + beta[expand]
    if center:
      return z + beta[expand]
    if scale:
      return gamma[expand] * z
    return z

  return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
  """A layer without parameters applying ``fun`` to its inputs."""
  def init_fun(rng, input_shape):
    return input_shape, ()

  def apply_fun(params, inputs, **kwargs):
    return fun(inputs, **fun_kwargs)

  return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
  def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
    """A pooling layer over the spatial axes (all but N and C; NHWC unless ``spec``)."""
    strides = strides or (1,) * len(window_shape)
    rescale = rescaler(window_shape, strides, padding) if rescaler else None
    non_spatial_axes = (0, len(window_shape) + 1) if spec is None else (
        spec.index("N"), spec.index("C"))
    for i in sorted(non_spatial_axes):
      window_shape = window_shape[:i] + (1,) + window_shape[i:]
      strides = strides[:i] + (1,) + strides[i:]

    def init_fun(rng, input_shape):
      pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
      ones_ = (1,) * len(window_shape)
      return lax.reduce_window_shape_tuple(
          input_shape, window_shape, strides, pads, ones_, ones_), ()

    def apply_fun(params, inputs, **kwargs):
      out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
      return rescale(out, inputs, spec) if rescale else out

    return init_fun, apply_fun

  return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims, strides, padding):
  def rescale(outputs, inputs, spec):
    non_spatial_axes = (0, inputs.ndim - 1) if spec is None else (
        spec.index("N"), spec.index("C"))
    spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                          if i not in non_spatial_axes)
    window_sizes = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0., lax.add,
                                     dims, strides, padding)
    for i in sorted(non_spatial_axes):
      window_sizes = jnp.expand_dims(window_sizes, i)
    return outputs / window_sizes
  return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def _flatten_init(rng, input_shape):
  return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
  return jnp.reshape(inputs, (inputs.shape[0], -1))


# Flatten, Identity and FanInSum are layers (pairs) themselves, not constructors.
Flatten = (_flatten_init, _flatten_apply)
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)
FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanOut(num):
  """A layer that repeats its input ``num`` times (for ``parallel``)."""
  return (lambda rng, input_shape: ([input_shape] * num, ()),
          lambda params, inputs, **kwargs: [inputs] * num)


def FanInConcat(axis=-1):
  """A layer that concatenates its inputs along ``axis``."""
  def init_fun(rng, input_shape):
    ax = axis % len(input_shape[0])
    concat_size = sum(shape[ax] for shape in input_shape)
    return input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:], ()

  def apply_fun(params, inputs, **kwargs):
    return jnp.concatenate(inputs, axis)

  return init_fun, apply_fun


def Dropout(rate, mode="train"):
  """Dropout that keeps each input with probability ``rate`` (needs ``rng=`` in train mode)."""
  def init_fun(rng, input_shape):
    return input_shape, ()

  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.get("rng", None)
    if rng is None:
      raise ValueError(
          "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
          "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, "
          "rng=rng)` where `rng` is a PRNG key (e.g. from `jax.random.key`).")
    if mode == "train":
      keep = bernoulli(rng, rate, inputs.shape)
      return jnp.where(keep, inputs / rate, 0)
    return inputs

  return init_fun, apply_fun


def serial(*layers):
  """Compose layers one after another; ``rng=`` is split among them."""
  nlayers = len(layers)
  init_funs, apply_funs = zip(*layers)

  def init_fun(rng, input_shape):
    params = []
    for layer_init in init_funs:
      rng, layer_rng = split(rng)
      input_shape, param = layer_init(layer_rng, input_shape)
      params.append(param)
    return input_shape, params

  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.pop("rng", None)
    rngs = split(rng, nlayers) if rng is not None else (None,) * nlayers
    for layer_apply, param, layer_rng in zip(apply_funs, params, rngs):
      inputs = layer_apply(param, inputs, rng=layer_rng, **kwargs)
    return inputs

  return init_fun, apply_fun


def parallel(*layers):
  """Apply layers side by side, the i-th to the i-th input (use with FanOut/FanInSum)."""
  nlayers = len(layers)
  init_funs, apply_funs = zip(*layers)

  def init_fun(rng, input_shape):
    rngs = split(rng, nlayers)
    return zip(*[layer_init(layer_rng, shape)
                 for layer_init, layer_rng, shape in zip(init_funs, rngs, input_shape)])

  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.pop("rng", None)
    rngs = split(rng, nlayers) if rng is not None else (None,) * nlayers
    return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

  return init_fun, apply_fun


def shape_dependent(make_layer):
  """Delay building a layer until the input shape is known: ``make_layer(shape)``."""
  def init_fun(rng, input_shape):
    return make_layer(input_shape)[0](rng, input_shape)

  def apply_fun(params, inputs, **kwargs):
    return make_layer(inputs.shape)[1](params, inputs, **kwargs)

  return init_fun, apply_fun
