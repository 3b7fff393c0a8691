"""Pure image analysis for the density probe: camera-motion estimation and compensation
(camera.py), moving-region segmentation with the rubric's exclusions (segment.py), checking
hook claims against the pixels (verify.py; more chances in other pairs: recheck.py; one
still point over the views: multiview.py), objects without a hook (objects.py), behaviour statistics over a track of samples
(behavior.py) and evidence drawing (draw.py). No browser here: arrays in, dicts out."""

from skycity_bench.analysis.vision.analyse import PairResult, Params, analyse_pair

__all__ = ["analyse_pair", "Params", "PairResult"]
