"""Pure analysis of pictures and series (no browser, no probe): what probes measure with and
what scorers and `check` judge with, so `scorers/` never imports `probes/`.
The object-level vision of the density count is its sibling package `vision/`."""
