"""``jax.nn`` and ``jax.nn.initializers`` against JAX 0.10.2 and NumPy/SciPy.

The op table (tests/ops/rows_nn.py) runs every function eager vs float64
formulas, under jit, vmap, JVP/VJP and compiled. This file adds what the table
cannot: values and derivatives at the special points JAX fixes with
``custom_jvp`` or ``where`` (kinks, +-inf, NaN), result dtypes and weak types,
the softmax family's masking and extreme inputs, errors, initializer values for
a fixed key, and printed jaxprs.

The ``*_GOLDEN`` data below were produced by JAX 0.10.2 on the CPU (x64 off):
``jax.vmap(f)`` / ``jax.vmap(jax.grad(f))`` at ``SPECIAL_POINTS``, the dtype
of ``f(v)`` for each input kind, the softmax-family expressions in
``_softmax_family``, the initializer expressions in ``INIT_GOLDEN``, and
``str(jax.make_jaxpr(f)(x))``.
"""
import base64
import warnings

import numpy as np
import pytest
from scipy import special

import openjax as jax
import openjax.numpy as jnp
from openjax import nn
from openjax.errors import ConcretizationTypeError
from tests.ops.rows_nn import attention_reference

inf, nan = np.inf, np.nan
SPECIAL_POINTS = np.array([-inf, -100, -6, -3, -1, -0.5, -0., 0., 0.5, 1, 2, 3, 6, 100, inf, nan],
                          np.float32)


def _b64(s, dtype=np.float32, shape=None):
  if ":" in s:
    dt, shp, s = s.split(":")
    dtype = jnp.dtype(dt)
    shape = tuple(int(d) for d in shp.split(",") if d)
  out = np.frombuffer(base64.b64decode(s), dtype)
  return out.reshape(shape) if shape is not None else out


# f32 values and derivatives (vmap(grad)) at SPECIAL_POINTS: base64 float32 bytes.
SPECIAL_GOLDEN = {
    "celu": (
        "AACAvwAAgL+NXX+/KEFzv6fSIb/QdMm+AAAAAAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAAAcyI7gO1LPbJavD6YRRs/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AADAfw=="),
    "celu_a": (
        "AAAAvwAAAL+Z//++jV3/vqta3b6n0qG+AAAAAAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAAAAM42AHMiO1SVCj6yWrw+AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AADAfw=="),
    "elu": (
        "AACAvwAAgL+NXX+/KEFzv6fSIb/QdMm+AAAAgAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAAAcyI7gO1LPbJavD6YRRs/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AADAfw=="),
    "elu_a": (
        "AAAAwAAAAMCNXf+/KEHzv6fSob/QdEm/AAAAgAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAAAc6I7gO3LPbJaPD+YRZs/AAAAQAAAAEAAAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AADAfw=="),
    "gelu": (
        "AADA/wAAAIAAAACAgGBuu46eIr4m/R2+AAAAgAAAAABtAbE+XFhXP0Iw+j9oxD9AAADAQAAAyEIAAIB/AADAfw==",
        "AADA/wAAAAAAAAAAbMo9vBHpqb0w0Ac+AAAAPwAAAD/1C14/kJ6KP04Fiz+Ve4E/AACAPwAAgD8AAMD/AADAfw=="),
    "gelu_exact": (
        "AADA/wAAAIDOZMuxULOEu4d2Ir6i+B2+AAAAgAAAAACvA7E+XmJXPwwt+j+mvT9AAADAQAAAyEIAAIB/AADAfw==",
        "AADAfwAAAABWVhizsrdDvE6hqr1crwc+AAAAPwAAAD8pFF4/FaqKP+Doij9vh4E/AACAPwAAgD8AAMB/AADA/w=="),
    "hard_sigmoid": (
        "AAAAAAAAAAAAAAAAAAAAAKuqqj5WVdU+AAAAPwAAAD9WVRU/q6oqP1ZVVT8AAIA/AACAPwAAgD8AAIA/AADAfw==",
        "AAAAAAAAAAAAAAAAAAAAAKuqKj6rqio+q6oqPquqKj6rqio+q6oqPquqKj4AAAAAAAAAAAAAAAAAAAAAAAAAAA=="),
    "hard_silu": (
        "AADA/wAAAIAAAACAAAAAgKuqqr5WVVW+AAAAgAAAAABWVZU+q6oqP1ZV1T8AAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAAAAAAAAAAAAKuqKj6rqqo+AAAAPwAAAD+rqio/VlVVP1ZVlT8AAIA/AACAPwAAgD8AAIA/AADAfw=="),
    "hard_tanh": (
        "AACAvwAAgL8AAIC/AACAvwAAgL8AAAC/AAAAgAAAAAAAAAA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AADAfw==",
        "AAAAAAAAAAAAAAAAAAAAAAAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAAAAAAAAAAAAAAAAAAAAAAAAAAACAPw=="),
    "identity": (
        "AACA/wAAyMIAAMDAAABAwAAAgL8AAAC/AAAAgAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPw=="),
    "leaky_relu": (
        "AACA/wAAgL+PwnW9j8L1vArXI7wK16O7AAAAgAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "CtcjPArXIzwK1yM8CtcjPArXIzwK1yM8AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/CtcjPA=="),
    "leaky_relu_s": (
        "AACA/wAAoMGamZm/mpkZv83MTL7NzMy9AAAAgAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "zcxMPs3MTD7NzEw+zcxMPs3MTD7NzEw+AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/zcxMPg=="),
    "log_sigmoid": (
        "AACA/wAAyMJIFMDADhxDwPYYqL8cXXm/GHIxvxhyMb84uvK+1mOgvmr5Ab6IA0e9Gz8iuwAAAIAAAACAAADAfw==",
        "AACAPwAAgD/zXX8/5ttzP6cmOz9/WR8/AAAAPwAAAD8DTcE+sLKJPqgg9D2iQUI9uwsiOwAAAAAAAAAAAADA/w=="),
    "mish": (
        "AADA/wAAAICGXnO8myQVvm9Xm76oCmK+AAAAgAAAAAAlIMA+GHddP6bT+D9mIz9AZ/+/QAAAyEIAAIB/AADAfw==",
        "AADA/wAAAAB2gUq85ES/vUSNcj2+OpQ+mpkZP5qZGT+27GI/0UaGP2jfiD+bs4I/XwSAPwAAgD8AAMD/AADAfw=="),
    "relu": (
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AAAAAA=="),
    "relu6": (
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/AACAPwAAAEAAAEBAAADAQAAAwEAAAMBAAADAfw==",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIA/AACAPwAAgD8AAIA/AAAAAAAAAAAAAAAAAAAAAA=="),
    "selu": (
        "Zgnhv2YJ4b+ZeuC/M9XVvxZAjr8RFzG/AAAAgAAAAABffQY/X32GP199BkAOvElADrzJQOQj0kIAAIB/AADAfw==",
        "AAAAAAAAAAAKzY47OkOzPaGSJT/efYg/ZgnhP2YJ4T9ffYY/X32GP199hj9ffYY/X32GP199hj9ffYY/AADAfw=="),
    "sigmoid": (
        "AAAAAAAAAAC7CyI7okFCPbGyiT4DTcE+AAAAPwAAAD9/WR8/qCY7P+p7YT/m23M/9V1/PwAAgD8AAIA/AADA/w==",
        "AAAAAAAAAAAopSE7KQs5PaRUST7QpHA+AACAPgAAgD7QpHA+o1RJPuYG1z0oCzk9bqQhOwAAAAAAAAAAAADA/w=="),
    "silu": (
        "AADA/wAAAICYEXO8OrERvrGyib4DTUG+AAAAgAAAAAB/WZ8+qCY7P+p74T/s5DZAeIa/QAAAyEIAAIB/AADAfw==",
        "AADA/wAAAADN9Em87W+0vXwhlD3PI4U+AAAAPwAAAD8Zbj0/0XttP9Keiz//Ros/6JOBPwAAgD8AAMD/AADA/w=="),
    "soft_sign": (
        "AADA/yF3fb+3bVu/AABAvwAAAL+rqqq+AAAAgAAAAACrqqo+AAAAP6uqKj8AAEA/t21bPyF3fT8AAMD/AADAfw==",
        "AADA/4CVzTgIL6c8AACAPQAAgD46juM+AACAPwAAgD86juM+AACAPjqO4z0AAIA9CC+nPICVzTgAAMD/AADAfw=="),
    "softplus": (
        "AAAAAAAAAAAbPyI7iANHPdZjoD44uvI+GHIxPxhyMT8cXXk/9hioP5cfCEAOHENASBTAQAAAyEIAAIB/AADAfw==",
        "AAAAAAAAAAC7CyI7okFCPbCyiT4DTcE+AAAAPwAAAD9/WR8/pyY7P+p7YT/m23M/811/PwAAgD8AAIA/AADAfw=="),
    "sparse_plus": (
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAIA9AACAPgAAgD4AABA/AACAPwAAAEAAAEBAAADAQAAAyEIAAIB/AADAfw==",
        "AADA/wAAAAAAAAAAAAAAAAAAAAAAAIA+AAAAPwAAAD8AAEA/AACAPwAAgD8AAIA/AACAPwAAgD8AAMD/AADAfw=="),
    "sparse_sigmoid": (
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAIA+AAAAPwAAAD8AAEA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AADAfw==",
        "AAAAAAAAAAAAAAAAAAAAAAAAgD4AAAA/AAAAPwAAAD8AAAA/AACAPgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="),
    "squareplus": (
        "AADA/wDQIzwgLCY+aAWbPno3Hj/24Ec/AACAPwAAgD978KM/vRvPP3qCGkCtYFNAYTHFQB4FyEIAAIB/AADAfw==",
        "AADA/wCY0Th4MdI8AvurPWmDjT4v6cE+AAAAPwAAAD9oCx8/TD45P3qCWj+ggGo/dG55P3P5fz8AAMD/AADAfw=="),
    "squareplus_b": (
        "AADA/wDAIzuAfyk9ICymPcwTVD56N54+AAAAPwAAAD+9G08/eoKaP96NB0BhMUVA/1LBQEgByEIAAIB/AADAfw==",
        "AADA/wB40Tcg7N47eDHSPBr2FT5pg40+AAAAPwAAAD9MPjk/eoJaP5d8cj90bnk/KEJ+P13+fz8AAMD/AADAfw=="),
    "tanh": (
        "AACAvwAAgL8w/3+/6Lt+v9b3Qr+fmuy+AAAAgAAAAACfmuw+1vdCP4PKdj/ou34/MP9/PwAAgD8AAIA/AADAfw==",
        "AAAAAAAAAAAAANA3gKUhPOAG1z6kVEk/AACAPwAAgD+jVEk/4AbXPmCxkD1tpSE8rP/PNwAAAAAAAAAAAADAfw=="),
    "log1mexp": (
        "////////////////////////////////AACA/wAAgP/YyG6/eNfqvkTnFL7qLVG9MKYiuwAAAIAAAACA/////w==",
        "AACAvwAAgL9tUYC/57SGvzd+yr/XpyLAAACA/wAAgH+tT8U/bfwUPylGID7fnFY95tkiOwAAAAAAAAAAAADAfw=="),
}
# result dtype (w: weak) for inputs 1.5, 2, f16[1], bf16[1], f32[1], i32[1]
DTYPE_GOLDEN = {
    "celu": "float32w float32w float16 bfloat16 float32 float32w",
    "celu_a": "float32w float32w float16 bfloat16 float32 float32w",
    "elu": "float32w float32w float16 bfloat16 float32 float32w",
    "elu_a": "float32w float32w float16 bfloat16 float32 float32w",
    "gelu": "float32 float32 float16 bfloat16 float32 float32",
    "gelu_exact": "float32 float32 float16 bfloat16 float32 float32",
    "hard_sigmoid": "float32w float32w float16 bfloat16 float32 float32w",
    "hard_silu": "float32w float32w float16 bfloat16 float32 float32w",
    "hard_tanh": "float32w int32w float16 bfloat16 float32 int32",
    "identity": "float32w int32w float16 bfloat16 float32 int32",
    "leaky_relu": "float32w float32w float16 bfloat16 float32 float32w",
    "leaky_relu_s": "float32w float32w float16 bfloat16 float32 float32w",
    "log_sigmoid": "float32w float32w float16 bfloat16 float32 float32",
    "mish": "float32w float32w float16 bfloat16 float32 float32",
    "relu": "float32w int32w float16 bfloat16 float32 int32",
    "relu6": "float32w float32w float16 bfloat16 float32 float32w",
    "selu": "float32w float32w float16 bfloat16 float32 float32w",
    "sigmoid": "float32w TypeError float16 bfloat16 float32 TypeError",
    "silu": "float32w TypeError float16 bfloat16 float32 TypeError",
    "soft_sign": "float32w float32w float16 bfloat16 float32 float32",
    "softplus": "float32w float32w float16 bfloat16 float32 float32",
    "sparse_plus": "float32w float32w float16 bfloat16 float32 float32w",
    "sparse_sigmoid": "float32w float32w float16 bfloat16 float32 float32w",
    "squareplus": "float32w float32w float16 bfloat16 float32 float32",
    "squareplus_b": "float32w float32w float16 bfloat16 float32 float32w",
    "tanh": "float32w float32w float16 bfloat16 float32 float32",
    "log1mexp": "float32w float32w float16 bfloat16 float32 float32",
}
SOFTMAX_GOLDEN = {   # dtype:shape:base64 bytes
    "softmax":
        ("float32:7,4:4k8DPbl4sj1qkXI+kdckPwAAAACxsok+qCY7PwAAAAAAAIA/AAAAAAAAAAAAAAAAAADA/wAAwP8A"
         "AMD/AADA/wAAwH8AAMB/AADAfwAAwH8AAMD/AADA/wAAwP8AAMD/AADA/wAAwP8AAMD/AADA/w=="),
    "softmax_where":
        ("float32:7,4:99gPPQAAAAC43IQ+FJQ0PwAAAACxsok+qCY7PwAAAAAAAAAAAAAAALGyiT6oJjs/AAAAAPNhuD0a"
         "mno+O00qPwAAAADzYbg9Gpp6PjtNKj8AAMD/AADA/wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="),
    "log_softmax":
        ("float32:7,4:ESxcwBEsHMAjWLi/i2DhvgAAgP/1GKi/1GOgvgAAgP8AAAAAAAD6xAAAesQAwHnEAADA////////"
         "/////////wAAwH8AAMB/AADAfwAAwH8AAMD/AADA/wAAwP8AAMD/AADA/wAAwP///////////w=="),
    "log_softmax_where":
        ("float32:7,4:OFZWwAAAgP9vrKy/vLGyvgAAgP/1GKi/1GOgvgAAgP8AAID/DFR6xPUYqL/UY6C+AACA/zcWGsBu"
         "LLS/urHQvgAAgP83FhrAbiy0v7qx0L4AAMD/AADA/wAAgP8AAID/AACA/wAAgP8AAID/AACA/w=="),
    "logsumexp":
        "float32:7:ESxcQPUYqD8AAHpEAACAfwAAwH8AAID/AACAfw==",
    "logsumexp_where":
        "float32:7:OFZWQPUYqD/1GKg/NxYaQDcWGkAAAID/AACA/w==",
    "logsumexp_b":
        "float32:7:56fcPwAAwH8AAHpEAACAfwAAwH8AAID/AADAfw==",
    "logsumexp_b_sign":
        "float32:7:56fcPxhyMT8AAHpEAACAfwAAwH8AAID/AADAfw==",
    "logsumexp_b_sign_s":
        "float32:7:AACAPwAAgL8AAIA/AACAPwAAwH8AAAAAAADA/w==",
    "logmeanexp_where":
        "float32:7,1:jgYQQAjNWz4IzVs+Go2nPxqNpz8AAID/AADA/w==",
    "g_softmax":
        "float32:3,4:lRKLvMYbNb719I0+qNeqvQAAAICEECG/ghAhPwAAAIAAAAAAAAAAgAAAAAAAAAAA",
    "g_softmax_where":
        "float32:3,4:1BbQvAAAAABNxIE+uoVpvgAAAICEECG/ghAhPwAAAAAAAAAAAAAAgGrdgj5u3YK+",
    "g_log_softmax_where":
        "float32:3,4:elBHPgAAAAB2Wpw/hES1v5qZmT6Ld7+/JBGZPwAAAAAAAAAAmpmZv/5czD+SDcu+",
    "g_logsumexp_where":
        "float32:3,4:99gPPQAAAAC43IQ+FJQ0PwAAAACxsok+qCY7PwAAAAAAAAAAAAAAALGyiT6oJjs/",
    "g_logsumexp_b":
        "float32:3,4:w414PejoqD4AAAAAsAIcPwAAAAAAAIA/AAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAA",
    "g_softmax_cj":
        "float32:3,4:lRKLvMYbNb729I0+qNeqvQAAAACEECG/gxAhPwAAAAAAAAAAAAAAgAAAAAAAAAAA",
    "g_softmax_cj_where":
        "float32:3,4:1RbQvAAAAABMxIE+voVpvgAAAACEECG/gxAhPwAAAAAAAAAAAAAAgGvdgj5s3YK+",
    "softmax_cj_where":
        ("float32:7,4:99gPPQAAAAC43IQ+FJQ0PwAAAACxsok+qCY7PwAAAAAAAAAAAAAAALGyiT6oJjs/AAAAAPNhuD0a"
         "mno+O00qPwAAAADzYbg9Gpp6PjtNKj8AAMD/AADA/wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="),
}
INIT_GOLDEN = {   # expression: dtype:shape:base64 bytes
    "zeros": ("I.zeros(k, (2, 3))",
        "float32:2,3:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
    "ones": ("I.ones(k, (2,), jnp.float16)",
        "float16:2:ADwAPA=="),
    "constant": ("I.constant(-7)(k, (2, 3))",
        "float32:2,3:AADgwAAA4MAAAODAAADgwAAA4MAAAODA"),
    "constant_i32": ("I.constant(3, jnp.int32)(k, (2,))",
        "int32:2:AwAAAAMAAAA="),
    "uniform": ("I.uniform(10.)(k, (2, 3))",
        "float32:2,3:FmOcQPyI2UD2NMVAcIazQM40kEAiertA"),
    "normal": ("I.normal(5.)(k, (2, 3))",
        "float32:2,3:besQvnF7FUD5P70/7YlEPxPDHr+w1Io/"),
    "truncated_normal": ("I.truncated_normal(5.)(k, (2, 3))",
        "float32:2,3:EFMKvq0zDkC9ZrQ/woc7P/WAF7+5a4Q/"),
    "truncated_normal_bounds": ("I.truncated_normal(1., lower=-1, upper=3)(pk, (7,))",
        "float32:7:rvAYP98XAEDY/2C+QEeiPTBXPz+o5Ps+Nia2PQ=="),
    "glorot_uniform": ("I.glorot_uniform()(k, (4, 5))",
        ("float32:4,5:mwmXvLtTlj5ubUI+dA/MPQwQpb1nlQ8+1L8xv3YJ5j4sWaY+IDQFP0JRer4k2xs/wgkyPyGNFj+J"
         "Iha93yMFP0C2sD5L+RA+jzIyvy0e6D4=")),
    "glorot_normal": ("I.glorot_normal()(k, (4, 5))",
        ("float32:4,5:ajdtvKzdcz4HsBo+68ygPbPogb2SF+M90H00v7IdxD6h+4c+lQLrPh/zSL5OrxE/GAg1P82PCj8z"
         "4uu8wt3qPj5DkT6qUuU9uFQ1vzM7xj4=")),
    "lecun_uniform": ("I.lecun_uniform()(k, (2, 2, 3, 4))",
        ("float32:2,2,3,4:gPs4vMAcOD7AH+49AOx5PeAoSr1w2q89lLLZvkjejD74u0s+9COjPphJGb5E4r4+IA3aPgxj"
         "uD6A4Le8DBCjPlBtWD5QjrE9GD/avoAkjj4gc8O9SALDvqCO8r7ghA4+UBzDvSCTxj78SNa+QHtQvuB62j1UYOA+"
         "eBODPuBvKb2I40S+GHCAPiDEND3gPwu+yJ4zPrCNuD1gUli+2G2fvgAfrb2Au/c9UBOYvYDIGD1wQBU+ZKe1vhCV"
         "MD6QJsY+")),
    "lecun_normal": ("I.lecun_normal()(pk, (2, 2, 3, 4))",
        ("float32:2,2,3,4:00kQPrq2DD9N6CS+Gsg0vXk/RD6vHNY95+MlvSltj70c+OG+WofPvtmF0r18gp0+6awoPqG4"
         "Ab/afuE+k45BvAhGo70Nrmg+vmjbvdmZDD9p5+Y+5HmnvYQl9r3L5BQ+5t1bPkmPur44EHw+Q4/ovU64nzzyES2+"
         "WBcAPzsVCb9SrtU+xMw8vtU7C79jGfg+W6LXvgGRgzxXT4s9pA7zvWsYmb5n3Zs+XCiNvmP9Dr2lrj49q5CJPksD"
         "+72UWzM+")),
    "he_uniform": ("I.he_uniform()(pk, (6, 5))",
        ("float32:6,5:oESyPvwAcz9g48m+wIvlvYht7D5oEoY+4LzSvWBJNb7kR1y/oA5Sv8jlg754uC4/gCHOPtxTa79A"
         "CVw/gHT2vMDpTb4sIgk/KEaJvuDucj9wxl4/EBtTvthOmb7Ymbc+IKECP3igRL80phI/EDCRvoBLSz2QDNO+")),
    "he_normal_axes": ("I.he_normal(in_axis=0, out_axis=(1, 2))(k, (6, 5, 2))",
        ("float32:6,5,2:y0ORvDZWlT7vcz0+hfDEPfkan72fEAs+VQ5dvysx8D5di6Y+6OkPP7Icdr48bTI/sbddP+izKT"
         "/YchC9W9MPP+PosT5Ybgw+iRVev2DI8j4O0xq+izk4v3UBjL+BHWQ+EI0avmprPT+L11a/q8WqvqN0LT7+LWo/gr"
         "zcPkpChb1qfqC+E5/XPoozjj0Mr16+F3SRPjwNEj6P0LG+mcALv7vfCL7yUEU+hRbwvZg/cD3mWG8+pyomv5fWjj"
         "7Uyjw/JsaKPkPx376/N+I9fcz+vZLSC771eUc/zkhwPjdg5L1qsxm+Kh6Dvi0Jaz5Ydzk/")),
    "vs_fan_out_normal_batch": ("I.variance_scaling(0.5, 'fan_out', 'normal', batch_axis=0)(k, (2, 3, 4))",
        ("float32:2,3,4:NfUjvKseKT6gHNY9tVtePWOeM72zEZ092mkCv0TTiD48xTw+KcKkPuAzC75/VM4+jtsCPz2qwz"
         "7lCqO8eaekPufHST5GnZ49oxoDvy1Vij4Q5q69o33Vvql9L79I+wA+")),
    "vs_fan_geo_avg_uniform": ("I.variance_scaling(2., 'fan_geo_avg', 'uniform')(k, (3, 7))",
        ("float32:3,7:hKrTvKKr0j6WPIg+jPwOPjZS571VOEk+shl5v0EwIT9zH+k+ZKw6Py5mr741a1o/ToF5PxL8Uj+x"
         "ZlK9nZU6P4Ol9z4VK0s+e7p5v4ilIj+tpF++")),
    "vs_complex_uniform": ("I.variance_scaling(1., 'fan_in', 'uniform')(k, (3, 4), jnp.complex64)",
        ("complex64:3,4:tlOqvU22Fr9Pn9w9pmzjvgQspT5TdzQ/B45dvYofLj9rRfw+yqbSPnxZQT5vlR0/qSCSvgpPIT"
         "+815Y+X79rPgJI570qPFo9uksyv7WksD0Z7Ku+5voGP8FEqb6DsvI+")),
    "vs_complex_truncated": ("I.variance_scaling(1., 'fan_in', 'truncated_normal')(k, (3, 4), jnp.complex64)",
        ("complex64:3,4:xsiUvXimA7+wSLE997+2vsLOvT4KYk8/MZBTvUxFJj90/OU+BwvAPrifMD618w8/xE6Nvvb8Gz"
         "8+p2o+xV03PtX+qr2NWSE9s+ouv7JLrT2YMZq+Ox/yPqH4kb4oS9E+")),
    "uniform_bf16": ("I.uniform()(k, (5,), jnp.bfloat16)",
        "bfloat16:5:0DsKPB88CTxNOg=="),
    "normal_f16": ("I.normal()(k, (5,), jnp.float16)",
        "float16:5:UqN8oA4lIx81lQ=="),
    "xavier_uniform_dtype": ("I.xavier_uniform(dtype=jnp.bfloat16)(k, (3, 3))",
        "bfloat16:3,3:iD4wP3A/LD9YvzA/QD7APsA9"),
    "kaiming_uniform_1d_in_axis": ("I.kaiming_uniform(in_axis=0, out_axis=0)(pk, (9,))",
        "float32:9:OVVaPxLPFEDzQne/TZGMvivIkD8xNCQ/zgyBvqUH3r7X5AbA"),
}
JAXPR_GOLDEN = {
    "relu": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = custom_jvp_call[
      name=relu
      call_jaxpr={ lambda ; c:f32[3]. let
          d:f32[3] = jit[
            name=relu
            jaxpr={ lambda ; c:f32[3]. let d:f32[3] = max c 0.0:f32[] in (d,) }
          ] c
        in (d,) }
      jvp=jvp
      symbolic_zeros=False
    ] a
  in (b,) }""",
    "relu_grad": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = custom_jvp_call[
      name=relu
      call_jaxpr={ lambda ; c:f32[3]. let
          d:f32[3] = jit[
            name=relu
            jaxpr={ lambda ; c:f32[3]. let d:f32[3] = max c 0.0:f32[] in (d,) }
          ] c
        in (d,) }
      jvp=jvp
      symbolic_zeros=False
    ] a
    e:bool[3] = gt a 0.0:f32[]
    _:f32[3] = broadcast_in_dim 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f32[3] = broadcast_in_dim 0.0:f32[]
    h:f32[3] = select_n e g f
  in (h,) }""",
    "relu6": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = custom_jvp_call[
      name=relu6
      call_jaxpr={ lambda ; c:f32[3]. let
          d:f32[3] = jit[
            name=relu6
            jaxpr={ lambda ; c:f32[3]. let
                e:f32[3] = max c 0.0:f32[]
                d:f32[3] = min e 6.0:f32[]
              in (d,) }
          ] c
        in (d,) }
      jvp=jvp
      symbolic_zeros=False
    ] a
  in (b,) }""",
    "sigmoid": """\
{ lambda ; a:f32[3]. let b:f32[3] = logistic a in (b,) }""",
    "silu": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=silu
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = logistic a
          b:f32[3] = mul a c
        in (b,) }
    ] a
  in (b,) }""",
    "gelu": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = integer_pow[y=3] a
    c:f32[3] = mul 0.044714998453855515:f32[] b
    d:f32[3] = add a c
    e:f32[3] = mul 0.7978845834732056:f32[] d
    f:f32[3] = tanh e
    g:f32[3] = add 1.0:f32[] f
    h:f32[3] = mul 0.5:f32[] g
    i:f32[3] = mul a h
  in (i,) }""",
    "one_hot": """\
{ lambda ; a:i32[2]. let
    b:f32[2,3] = jit[
      name=_one_hot
      jaxpr={ lambda ; a:i32[2]. let
          c:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
          d:i32[1,3] = iota[dimension=1 dtype=int32 shape=(1, 3) sharding=None] 
          e:bool[2,3] = eq c d
          b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] e
        in (b,) }
    ] a
  in (b,) }""",
    "identity": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[name=identity jaxpr={ lambda ; a:f32[3]. let  in (a,) }] a
  in (b,) }""",
    "softmax": """\
{ lambda ; a:f32[2,4]. let
    b:f32[2] = reduce_max[axes=(1,)] a
    c:f32[2] = max -inf:f32[] b
    d:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:f32[2,1] = stop_gradient d
    f:f32[2,4] = sub a e
    g:f32[2,4] = exp f
    h:f32[2] = reduce_sum[axes=(1,) out_sharding=None] g
    i:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] h
    j:f32[2,4] = div g i
  in (j,) }""",
    "log_softmax": """\
{ lambda ; a:f32[2,4]. let
    b:f32[2,4] = jit[
      name=log_softmax
      jaxpr={ lambda ; a:f32[2,4]. let
          c:f32[2] = reduce_max[axes=(1,)] a
          d:f32[2] = max -inf:f32[] c
          e:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d
          f:f32[2,1] = stop_gradient e
          g:f32[2,4] = sub a f
          h:f32[2,4] = exp g
          i:f32[2] = reduce_sum[axes=(1,) out_sharding=None] h
          j:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] i
          k:f32[2,1] = log j
          b:f32[2,4] = sub g k
        in (b,) }
    ] a
  in (b,) }""",
    "logsumexp_axis": """\
{ lambda ; a:f32[2,4]. let
    b:f32[2] = reduce_max[axes=(1,)] a
    c:f32[2] = max -inf:f32[] b
    d:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:bool[2,1] = is_finite d
    f:f32[2,1] = broadcast_in_dim 0.0:f32[]
    g:f32[2,1] = select_n e f d
    h:f32[2,1] = stop_gradient g
    i:f32[2,4] = sub a h
    j:f32[2,4] = exp i
    k:f32[2] = reduce_sum[axes=(1,) out_sharding=None] j
    l:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] k
    _:f32[2,1] = sign l
    m:f32[2,1] = abs l
    n:f32[2,1] = log m
    o:f32[2,1] = add n h
  in (o,) }""",
    "glu": """\
{ lambda ; a:f32[2,4]. let
    b:f32[2,2] = jit[
      name=glu
      jaxpr={ lambda ; a:f32[2,4]. let
          c:f32[2,2] d:f32[2,2] = split[axis=1 sizes=(np.int64(2), np.int64(2))] a
          e:f32[2,2] = logistic d
          b:f32[2,2] = mul c e
        in (b,) }
    ] a
  in (b,) }""",
}


# ------------------------------------------------------------------ names
JAX_NN_NAMES = (
    "celu dot_product_attention elu gelu get_scaled_dot_general_config glu hard_sigmoid "
    "hard_silu hard_swish hard_tanh identity initializers leaky_relu log1mexp log_sigmoid "
    "log_softmax logmeanexp logsumexp mish one_hot relu relu6 scaled_dot_general scaled_matmul "
    "selu sigmoid silu soft_sign softmax softplus sparse_plus sparse_sigmoid squareplus "
    "standardize swish tanh").split()
JAX_INIT_NAMES = (
    "Initializer constant delta_orthogonal glorot_normal glorot_uniform he_normal he_uniform "
    "kaiming_normal kaiming_uniform lecun_normal lecun_uniform normal ones orthogonal "
    "truncated_normal uniform variance_scaling xavier_normal xavier_uniform zeros").split()


def _public(mod):
  return {n for n in dir(mod) if not n.startswith("_")}


def test_public_names_match_jax():
  assert _public(nn) == set(JAX_NN_NAMES)
  assert _public(nn.initializers) == set(JAX_INIT_NAMES)
  assert nn.tanh is jnp.tanh and nn.swish is nn.silu and nn.hard_swish is nn.hard_silu
  assert nn.initializers.xavier_uniform is nn.initializers.glorot_uniform
  assert nn.initializers.kaiming_normal is nn.initializers.he_normal
  assert jax.nn is nn


# ------------------------------------------------- elementwise activations
ELEMENTWISE = {
    "celu": nn.celu, "celu_a": lambda x: nn.celu(x, 0.5),
    "elu": nn.elu, "elu_a": lambda x: nn.elu(x, 2.0),
    "gelu": nn.gelu, "gelu_exact": lambda x: nn.gelu(x, approximate=False),
    "hard_sigmoid": nn.hard_sigmoid, "hard_silu": nn.hard_silu, "hard_tanh": nn.hard_tanh,
    "identity": nn.identity, "leaky_relu": nn.leaky_relu,
    "leaky_relu_s": lambda x: nn.leaky_relu(x, 0.2), "log_sigmoid": nn.log_sigmoid,
    "mish": nn.mish, "relu": nn.relu, "relu6": nn.relu6, "selu": nn.selu,
    "sigmoid": nn.sigmoid, "silu": nn.silu, "soft_sign": nn.soft_sign,
    "softplus": nn.softplus, "sparse_plus": nn.sparse_plus,
    "sparse_sigmoid": nn.sparse_sigmoid, "squareplus": nn.squareplus,
    "squareplus_b": lambda x: nn.squareplus(x, 1.0), "tanh": nn.tanh,
    "log1mexp": nn.log1mexp,
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_values_and_derivatives_at_special_points(name):
  """Kinks (relu'(0) = 0, relu6'(6) = 0, hard_tanh'(+-1), ...), +-inf, NaN and
  large inputs, against JAX. Differences allowed: a few ulp from the
  elementwise math; sigmoid(-100) = 3.8e-44 is a subnormal XLA flushes to 0;
  cancellation amplifies last-ulp differences in tanh' = 1 - tanh(x)**2 near
  |x| = 3..6 (to ~1%) and in squareplus' = (1 + x / sqrt(x*x + b)) / 2 at
  x = -100 (to ~2e-4; JAX's value is the less accurate one there); the
  elu family's derivative is expm1(x) + 1 (JAX's expm1 JVP), so one ulp of
  expm1 near -1 (6e-8, which differs between NumPy's AVX-512 float32 kernel
  and XLA's) is an absolute error of alpha * 6e-8 in a value of ~1e-3."""
  f = ELEMENTWISE[name]
  want_val, want_grad = (_b64(s) for s in SPECIAL_GOLDEN[name])
  with np.errstate(invalid="ignore"):   # inf - inf inside some derivatives at +-inf
    val = np.asarray(jax.vmap(f)(SPECIAL_POINTS))
    grad = np.asarray(jax.vmap(jax.grad(f))(SPECIAL_POINTS))
  np.testing.assert_allclose(val, want_val, rtol=4e-6, atol=1e-37, err_msg=name)
  rtol = {"tanh": 2e-2, "squareplus": 4e-4, "squareplus_b": 4e-4}.get(name, 4e-6)
  atol = {"elu": 6e-8, "celu": 6e-8, "celu_a": 6e-8 / 0.5, "elu_a": 2 * 6e-8,
          "selu": 1.7581 * 6e-8}.get(name, 1e-37)
  np.testing.assert_allclose(grad, want_grad, rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_result_dtypes_and_weak_types(name):
  f = ELEMENTWISE[name]
  inputs = [1.5, 2, np.array([1.5], np.float16), jnp.array([1.5], jnp.bfloat16),
            np.array([1.5], np.float32), np.array([2], np.int32)]
  got = []
  for v in inputs:
    try:
      out = f(v)
      assert isinstance(out, jax.Array), type(out)
      got.append(f"{out.dtype.name}{'w' if out.weak_type else ''}")
    except TypeError:
      got.append("TypeError")
  assert " ".join(got) == DTYPE_GOLDEN[name]


def test_custom_jvp_kinks_under_transformations():
  x = np.array([0., 6., -1., 1.], np.float32)
  for g in (jax.grad, lambda f: jax.jit(jax.grad(f))):
    assert float(g(nn.relu)(0.)) == 0. and float(g(nn.relu6)(0.)) == 0.
    assert float(g(nn.relu6)(6.)) == 0. and float(g(nn.relu)(1e-30)) == 1.
  _, t = jax.jvp(nn.relu6, (x,), (np.ones(4, np.float32),))
  np.testing.assert_array_equal(t, [0., 0., 0., 1.])
  np.testing.assert_array_equal(jax.vmap(jax.grad(jax.grad(nn.relu)))(x), np.zeros(4))
  # The rule is linear in the tangent: reverse mode transposes it.
  ct = jax.vjp(nn.relu, x)[1](np.full(4, 2., np.float32))[0]
  np.testing.assert_array_equal(ct, [0., 2., 0., 2.])
  np.testing.assert_allclose(jax.grad(nn.log1mexp)(np.float32(0.5)), 1 / np.expm1(0.5),
                             rtol=1e-6)
  # hard_sigmoid goes through relu6's rule: zero slope at x = -3 and x = 3.
  np.testing.assert_array_equal(jax.vmap(jax.grad(nn.hard_sigmoid))(np.array([-3., 3.])), 0)


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16, np.float32])
def test_gelu_both_forms(dtype):
  x = np.linspace(-6, 6, 41).astype(dtype)
  x64 = x.astype(np.float64)
  exact = 0.5 * x64 * (1 + special.erf(x64 / np.sqrt(2)))
  approx = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)))
  tol = {np.float16: 4e-3, jnp.bfloat16: 3e-2, np.float32: 2e-6}[dtype]
  for out, want in ((nn.gelu(x, approximate=False), exact), (nn.gelu(x), approx)):
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(np.asarray(out, np.float64), want, rtol=tol, atol=tol)
  assert np.abs(exact - approx).max() > 1e-4   # the two forms are different functions
  out = nn.gelu(np.arange(3, dtype=np.int32))  # integers are promoted to float
  assert out.dtype == np.float32


def test_glu_split_and_errors():
  x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
  np.testing.assert_allclose(nn.glu(x, axis=0), x[:2] * special.expit(x[2:]), rtol=1e-6)
  with pytest.raises(AssertionError, match="glu: axis -1 of the input f32\\[4,5\\] has size 5"):
    nn.glu(x[:, :5])


# ------------------------------------------------------- softmax family
def _softmax_family():
  X = np.array([[0, 1, 2, 3], [-inf, 0, 1, -inf], [1000, -1000, 0, 1], [inf, 0, 1, 2],
                [nan, 0, 1, 2], [-inf] * 4, [inf, inf, 0, 0]], np.float32)
  W = np.array([[1, 0, 1, 1], [1, 1, 1, 0], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 1],
                [1, 1, 0, 0], [0, 0, 0, 0]], bool)
  B = np.array([1, -2, 0, 0.5], np.float32)
  C = np.array([0.3, -1.2, 2.0, 0.7], np.float32)
  fin, wf = X[:3], W[:3]

  def loss(fn, **kw):
    return lambda x: (fn(x, **kw) * C).sum()

  def loss_masked(fn, **kw):
    return lambda x: jnp.where(wf, fn(x, **kw) * C, 0).sum()
  out = {
      "softmax": nn.softmax(X), "softmax_where": nn.softmax(X, where=W),
      "log_softmax": nn.log_softmax(X), "log_softmax_where": nn.log_softmax(X, where=W),
      "logsumexp": nn.logsumexp(X, axis=1), "logsumexp_where": nn.logsumexp(X, 1, where=W),
      "logsumexp_b": nn.logsumexp(X, axis=1, b=B),
      "logmeanexp_where": nn.logmeanexp(X, axis=1, where=W, keepdims=True),
      "g_softmax": jax.grad(loss(nn.softmax))(fin),
      "g_softmax_where": jax.grad(loss(nn.softmax, where=wf))(fin),
      "g_log_softmax_where": jax.grad(loss_masked(nn.log_softmax, where=wf))(fin),
      "g_logsumexp_where": jax.grad(lambda x: nn.logsumexp(x, axis=1, where=wf).sum())(fin),
      "g_logsumexp_b": jax.grad(lambda x: nn.logsumexp(x, axis=1, b=np.abs(B)).sum())(fin),
  }
  out["logsumexp_b_sign"], out["logsumexp_b_sign_s"] = nn.logsumexp(X, 1, b=B, return_sign=True)
  with jax.config.override("jax_softmax_custom_jvp", True):
    out["g_softmax_cj"] = jax.grad(loss(nn.softmax))(fin)
    out["g_softmax_cj_where"] = jax.grad(loss(nn.softmax, where=wf))(fin)
    out["softmax_cj_where"] = nn.softmax(X, where=W)
  return out


def test_softmax_family_extreme_inputs_masks_and_gradients_match_jax():
  """+-1000, -inf entries and fully masked rows, +inf (NaN rows, as in JAX),
  NaN propagation, negative weights b (NaN unless return_sign), and the
  derivatives with masks, with and without jax_softmax_custom_jvp."""
  got = _softmax_family()
  assert set(got) == set(SOFTMAX_GOLDEN)
  for name, value in got.items():
    want = _b64(SOFTMAX_GOLDEN[name])
    assert np.asarray(value).dtype == want.dtype, name
    np.testing.assert_allclose(value, want, rtol=2e-6, atol=0, err_msg=name)


@pytest.mark.parametrize("axis", [-1, 0, (0, 2), (-1, -3), None])
def test_softmax_family_matches_scipy(axis):
  x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32) * 5
  np.testing.assert_allclose(nn.softmax(x, axis), special.softmax(x, axis), rtol=2e-6,
                             atol=1e-7)
  np.testing.assert_allclose(nn.log_softmax(x, axis), special.log_softmax(x, axis),
                             rtol=2e-6, atol=2e-6)
  for keepdims in (False, True):
    np.testing.assert_allclose(nn.logsumexp(x, axis, keepdims=keepdims),
                               special.logsumexp(x, axis, keepdims=keepdims), rtol=2e-6)
  b = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
  r, s = nn.logsumexp(x, axis, b=b, return_sign=True)
  want_r, want_s = special.logsumexp(x, axis, b=b, return_sign=True)
  np.testing.assert_allclose(r, want_r, rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(s, want_s)


def test_logsumexp_special_cases():
  # A zero weight drops the term even when a is inf or NaN there.
  assert float(nn.logsumexp(np.array([inf, 0.]), b=np.array([0., 1.]))) == 0.
  assert np.isnan(nn.logsumexp(np.array([nan, 0.], np.float32)))
  assert float(nn.logsumexp(np.zeros((0,), np.float32))) == -inf
  assert float(nn.logsumexp(np.array([-inf, -inf]))) == -inf
  z = np.array([1 + 2j, 0.5 - 1j], np.complex64)
  np.testing.assert_allclose(nn.logsumexp(z), special.logsumexp(z), rtol=1e-6)
  out = nn.logsumexp(1.0)   # reductions give strong types, as in JAX
  assert out.dtype == np.float32 and not out.weak_type
  x = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
  jax.test_util.check_grads(lambda x: nn.logsumexp(x, axis=0, b=np.float32(2.)), (x,), 2,
                            atol=1e-2, rtol=1e-2)


def test_logmeanexp_and_softmax_under_jit_and_vmap():
  x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
  w = np.random.default_rng(5).random((3, 4)) < 0.7
  want = np.log(np.where(w, np.exp(x), 0).sum(1) / w.sum(1))
  np.testing.assert_allclose(nn.logmeanexp(x, axis=1, where=w), want, rtol=1e-6)
  f = jax.jit(lambda x, w: nn.softmax(x, axis=-1, where=w))
  np.testing.assert_allclose(f(x, w), nn.softmax(x, where=w), rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(nn.log_softmax)(x), special.log_softmax(x, -1),
                             rtol=1e-6, atol=1e-6)
  np.testing.assert_allclose(jax.vmap(lambda r: nn.logsumexp(r, b=r))(np.abs(x)),
                             special.logsumexp(np.abs(x), 1, b=np.abs(x)), rtol=1e-6)


def test_standardize():
  rng = np.random.default_rng(6)
  x = (rng.standard_normal((4, 6)) * 3 + 10).astype(np.float32)
  mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
  for alg in ("fast", "stable"):
    np.testing.assert_allclose(nn.standardize(x, algorithm=alg), (x - mean) / np.sqrt(var + 1e-5),
                               rtol=2e-4, atol=2e-4)
  np.testing.assert_allclose(nn.standardize(x, axis=None, mean=1., variance=4., epsilon=0.),
                             (x - 1) / 2, rtol=1e-6)
  w = rng.random((4, 6)) < 0.6
  w[:, 0] = True
  m = np.where(w, x, 0).sum(0, keepdims=True) / w.sum(0, keepdims=True)
  v = np.where(w, (x - m) ** 2, 0).sum(0, keepdims=True) / w.sum(0, keepdims=True)
  np.testing.assert_allclose(nn.standardize(x, 0, where=w, algorithm="stable"),
                             (x - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-4)
  # The one-pass variance can come out negative through cancellation; it is clipped at 0.
  const = np.full((1, 8), 1e4 + 0.1, np.float32)
  assert np.isfinite(nn.standardize(const)).all()
  with pytest.raises(ValueError, match="unknown algorithm 'two-pass'"):
    nn.standardize(x, algorithm="two-pass")
  with pytest.raises(TypeError, match="standardize requires ndarray or scalar"):
    nn.standardize([1., 2.])


def test_one_hot():
  idx = np.array([[0, 2], [-1, 3]], np.int32)
  out = nn.one_hot(idx, 3)
  assert out.dtype == np.float32 and out.shape == (2, 2, 3)
  np.testing.assert_array_equal(out, (idx[..., None] == np.arange(3)).astype(np.float32))
  for axis in (0, 1, -2):
    out = nn.one_hot(idx, 4, axis=axis, dtype=jnp.int8)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, np.moveaxis(idx[..., None] == np.arange(4), -1, axis))
  with pytest.warns(DeprecationWarning, match="one_hot input should be integer-typed"):
    np.testing.assert_array_equal(nn.one_hot(np.array([1.]), 2), [[0., 1.]])
  with pytest.raises(ConcretizationTypeError, match="num_classes"):
    jax.jit(lambda n: nn.one_hot(idx, n))(3)
  # A mapped axis name: member j holds column j of the one-hot encoding.
  named = jax.vmap(lambda i: nn.one_hot(i, 3, axis="b"), axis_name="b")(np.array([2, 1, 2]))
  np.testing.assert_array_equal(named, [0., 1., 1.])
  with pytest.raises(ValueError, match="num_classes to match the size of axis b, but 4 != 3"):
    jax.vmap(lambda i: nn.one_hot(i, 4, axis="b"), axis_name="b")(np.array([2, 1, 2]))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    nn.one_hot(jnp.arange(3), 3)   # integer input: no warning


# ------------------------------------------------------------- attention
def _qkv(B=2, T=5, S=6, N=4, K=2, H=8, seed=7, dtype=np.float32):
  rng = np.random.default_rng(seed)
  return [rng.standard_normal(s).astype(dtype) for s in ((B, T, N, H), (B, S, K, H), (B, S, K, H))]


def test_dot_product_attention_masks_lengths_window_residual():
  q, k, v = _qkv()
  B, T, N, H = q.shape
  S = k.shape[1]
  qs, ks = np.array([3, 5], np.int32), np.array([6, 2], np.int32)
  t, s = np.arange(T)[:, None], np.arange(S)[None, :]
  keep = ((t <= s + 1) & (t >= s - 2))[None, None] & (s < ks[:, None, None, None])
  out, lse = nn.dot_product_attention(q, k, v, query_seq_lengths=qs, key_value_seq_lengths=ks,
                                      local_window_size=(1, 2), return_residual=True)
  want = attention_reference(q, k, v, mask=keep) * (np.arange(T)[None, :] < qs[:, None])[..., None,
                                                                                         None]
  np.testing.assert_allclose(out, want, rtol=1e-5, atol=2e-6)
  logits = np.einsum("btnh,bsnh->bnts", q.astype(np.float64), np.repeat(k, N // 2, 2)) / np.sqrt(H)
  # Padded query rows are masked entirely: their residual is about -0.7 * f32 max.
  keep = keep & (t < qs[:, None, None, None])
  logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
  np.testing.assert_allclose(lse, special.logsumexp(logits, -1).transpose(0, 2, 1), rtol=1e-5)
  # Unbatched TNH inputs, a symmetric int window, and MQA (K = 1).
  q1, k1, v1 = _qkv(B=1, K=1, seed=8)
  out = nn.dot_product_attention(q1[0], k1[0], v1[0], local_window_size=1, is_causal=True,
                                 implementation="xla")
  keep = ((t <= s + 1) & (t >= s - 1) & (t >= s))[None, None]
  np.testing.assert_allclose(out, attention_reference(q1, k1, v1, mask=keep)[0], rtol=1e-5,
                             atol=2e-6)


def test_dot_product_attention_gradients_and_half_precision():
  q, k, v = _qkv(T=3, S=4, H=4)
  bias = np.random.default_rng(9).standard_normal((1, 4, 3, 4)).astype(np.float32)
  with jax.enable_x64():
    # The softmax runs in float32 even here (as in JAX): float32 tolerances.
    jax.test_util.check_grads(
        lambda q, k, v: nn.dot_product_attention(q, k, v, bias, is_causal=True),
        [a.astype(np.float64) for a in (q, k, v)], 1, atol=5e-3, rtol=5e-3)
  hq, hk, hv = (a.astype(jnp.bfloat16) for a in (q, k, v))
  out = nn.dot_product_attention(hq, hk, hv)
  assert out.dtype == jnp.bfloat16
  np.testing.assert_allclose(np.asarray(out, np.float32), attention_reference(q, k, v),
                             atol=5e-2)


def test_dot_product_attention_errors():
  q, k, v = _qkv()
  cases = [
      (lambda: nn.dot_product_attention(q, k, v[..., :4]), ValueError,
       "value shape should be \\[2, 6, 2, 8\\]"),
      (lambda: nn.dot_product_attention(q, k, v.astype(np.float16)), ValueError,
       "value dtype should be float32, but got float16"),
      (lambda: nn.dot_product_attention(q[:, :, :3], k, v), ValueError,
       "number of query heads must be a multiple of key/value heads, but got 3 vs 2"),
      (lambda: nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 5, 6), np.int32)),
       ValueError, "mask dtype should be bool"),
      (lambda: nn.dot_product_attention(q, k, v, np.ones((1, 3, 5, 6), np.float32)),
       ValueError, "bias of shape \\(1, 3, 5, 6\\) must have 1 or N=4 heads"),
      (lambda: nn.dot_product_attention(q, k, v, query_seq_lengths=np.array([1., 2.])),
       ValueError, "query_seq_lengths dtype should be int32, but got float32"),
      (lambda: nn.dot_product_attention(q, k, v, implementation="cudnn"), RuntimeError,
       "cuDNN is not detected"),
      (lambda: nn.dot_product_attention(q, k, v, implementation="flash"), ValueError,
       "Unsupported implementation option: flash"),
  ]
  for fn, err, msg in cases:
    with pytest.raises(err, match=msg):
      fn()


# ---------------------------------------------------------- initializers
def _init_namespace():
  return {"I": nn.initializers, "jnp": jnp, "k": jax.random.key(42), "pk": jax.random.PRNGKey(7)}


@pytest.mark.parametrize("name", sorted(INIT_GOLDEN))
def test_initializer_values_match_jax(name):
  """Bit-identical where the sampler is exact (constants, uniform, the complex
  disk); normal and truncated normal (through erf_inv, whose float32 error is
  absolute) within 4 ulp of the array's largest magnitude."""
  expr, data = INIT_GOLDEN[name]
  want = _b64(data)
  got = np.asarray(eval(expr, _init_namespace()))  # noqa: S307 - our own expressions
  assert got.dtype == want.dtype and got.shape == want.shape
  if "normal" in expr or "truncated" in expr:
    if want.dtype.kind == "c":
      got, want = got.view(np.float32), want.view(np.float32)
    got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=0, atol=4 * np.spacing(np.abs(want).max()))
  else:
    np.testing.assert_array_equal(got, want)


def test_initializers_protocol_defaults_and_errors():
  I, key = nn.initializers, jax.random.key(0)
  for init in (I.zeros, I.ones, I.constant(2.), I.uniform(), I.normal(), I.truncated_normal(),
               I.glorot_uniform(), I.he_normal(), I.lecun_uniform()):
    assert isinstance(init, I.Initializer)
    out = init(key, (3, 4))
    assert out.dtype == np.float32 and not out.weak_type and out.shape == (3, 4)
  assert I.normal(dtype=jnp.float16)(key, (2,)).dtype == np.float16
  assert I.glorot_normal(dtype=jnp.bfloat16)(key, (2, 2), jnp.float32).dtype == np.float32
  w = I.variance_scaling(3., "fan_in", "uniform")(key, (1000, 10))
  assert np.abs(w).max() <= np.sqrt(3 * 3. / 1000) and abs(np.var(w) - 3e-3) < 3e-4
  w = I.truncated_normal(2.)(key, (4000,))
  assert np.abs(w).max() < 4. and abs(np.std(w) - 2 * 0.8796) < 0.05
  with pytest.raises(ValueError, match="Can't compute input and output sizes of a 1-dimensional"):
    I.glorot_uniform()(key, (5,))
  with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan"):
    I.variance_scaling(1., "fan", "normal")(key, (2, 2))
  with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer"):
    I.variance_scaling(1., "fan_in", "cauchy")(key, (2, 2))
  # Under jit (shape static) the values are the eager ones.
  f = jax.jit(I.he_uniform(), static_argnums=(1, 2))
  np.testing.assert_array_equal(f(key, (3, 3), jnp.float32), I.he_uniform()(key, (3, 3)))


# ----------------------------------------------------------- compiled
def test_compiled_matches_eager():
  """One IREE module: attention with every mask kind, the softmax family with
  masks, and uniform- and normal-based initializers."""
  q, k, v = _qkv()
  w = np.random.default_rng(10).random((2, 5)) < 0.7
  x = np.random.default_rng(11).standard_normal((2, 5)).astype(np.float32)
  key = jax.random.key(3)

  def program(q, k, v, x, w, key):
    return [nn.dot_product_attention(q, k, v, is_causal=True, local_window_size=(2, 0),
                                     key_value_seq_lengths=np.array([4, 6], np.int32),
                                     return_residual=True),
            nn.softmax(x, where=w), nn.log_softmax(x, axis=0, where=w),
            nn.logsumexp(x, axis=1, b=w.astype(np.float32)), nn.standardize(x, where=w),
            nn.one_hot(jnp.argmax(x, 1), 5), nn.gelu(x, approximate=False), nn.mish(x),
            nn.initializers.glorot_uniform()(key, (4, 5)),
            nn.initializers.he_normal()(key, (4, 5))]
  eager = program(q, k, v, x, w, key)
  with jax.config.override("openjax_executor", "iree"):
    compiled = jax.jit(program)(q, k, v, x, w, key)
  for e, c in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(compiled)):
    assert np.asarray(e).dtype == np.asarray(c).dtype
    np.testing.assert_allclose(c, e, rtol=2e-5, atol=2e-6)


# --------------------------------------------------------------- jaxprs
@pytest.mark.parametrize("name", sorted(JAXPR_GOLDEN))
def test_printed_jaxprs_match_jax(name):
  """Same equations and the same jit/custom_jvp_call nesting as JAX. One
  printing difference outside jax.nn is normalised: JAX 0.10 shows some
  integer parameters as ``np.int64(2)``."""
  x, x2 = np.ones((3,), np.float32), np.ones((2, 4), np.float32)
  fns = {"relu": (nn.relu, x), "relu_grad": (jax.grad(lambda x: nn.relu(x).sum()), x),
         "relu6": (nn.relu6, x), "sigmoid": (nn.sigmoid, x), "silu": (nn.silu, x),
         "gelu": (nn.gelu, x), "one_hot": (lambda i: nn.one_hot(i, 3), np.arange(2, dtype=np.int32)),
         "identity": (nn.identity, x), "softmax": (nn.softmax, x2),
         "log_softmax": (nn.log_softmax, x2), "glu": (nn.glu, x2),
         "logsumexp_axis": (lambda x: nn.logsumexp(x, axis=1, keepdims=True), x2)}
  fn, arg = fns[name]
  got = str(jax.make_jaxpr(fn)(arg))
  want = JAXPR_GOLDEN[name]
  want = want.replace("sizes=(np.int64(2), np.int64(2))", "sizes=(2, 2)")
  assert got == want
