"""FFT family: the fft primitive (its traced lowering is in control/)."""
