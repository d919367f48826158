"""First-order primitives in family folders, each family importing only
``base`` and families before it in this order (tests/test_imports.py holds
it): base -> shape -> elementwise -> reduce, index, dot_conv, random_bits,
fft -> sort (index), collectives (reduce), linalg (dot_conv). Nothing is
re-exported here: import a name from the module that defines it."""
