"""``jax.numpy``'s implementation, in one import order (checked by
``tests/test_structure.py``'s ``NUMPY_ORDER``): each module imports only the
modules before it, with plain ``from openjax._src.numpy.<module> import name``
imports.

1. helpers: ``util``
2. creation: ``creation``, ``scalar_types``
3. ufuncs: ``_ufunc_helpers``, ``ufuncs_bitwise``, ``ufuncs_float``, ``ufuncs``
4. shape: ``shape_reshaping``, ``shape_joining``
5. indexing: ``indexer``, ``index_update`` (``x.at[]``), ``indexing``,
   ``repeating`` (``repeat``)
6. reductions: ``reduction_plans``, ``reductions``, ``nan_reductions``, then ``misc``
   (``where``, ``clip``, dtype API), ``statistics``, ``searching`` (with ``interp``),
   ``sorting``, ``shape_padding`` (``pad``'s statistic modes use the reductions and
   ``median``)
7. libraries built on those: ``einsum``, ``linalg_ops``, ``ranges``, ``convolution``,
   ``linalg``, ``fft``, ``stats``, ``polynomial``, ``setops``, ``index_tricks``,
   ``bits``, ``histograms``, ``windows``, ``vectorize``, ``functional``
8. ``array_methods``: the operators and methods of ``Array`` and tracers.

``openjax/numpy/__init__.py`` re-exports every module's ``__all__``.
"""
