"""Identity family: primitives whose value is their operand, kept as
equations for what they tell the compiler (``optimization_barrier``) or the
runtime (``copy``)."""
