"""The control layer: higher-order primitives, whose rules trace or transform
a sub-jaxpr (jit's closed call, cond, while, scan, custom_jvp/custom_vjp
calls, remat, reduce with a computation), and the traced lowerings of
first-order primitives that emit loops (random samplers, linear algebra,
fft). Modules here import the interpreters and the runtime directly."""
