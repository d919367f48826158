"""FFT family, on ``base``, ``shape`` and ``elementwise``: the fft primitive
(``fft``); its traced lowering is in control/fft_lowering.py."""
