"""Everything that touches Chromium: launch, the loopback origin, the closed network,
the injected samplers, the fake clock and calibration."""
