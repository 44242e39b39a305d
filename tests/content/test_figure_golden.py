"""The report figures against golden images: the figures are drawn with Pillow through
raster.py, which subclasses Pillow's font class, so a Pillow release that changes text or
shape drawing must show up here before a student sees a broken figure (pyproject pins
Pillow's major version; raising it means looking at this test's diff first).

Each figure is drawn from fixed data (no grading, no seed) and compared pixel by pixel with
tests/content/golden/<name>.png: at most 0.5 % of the pixels may differ by more than 48 levels in a
channel (anti-aliasing and font hinting move edges by a pixel), and the mean difference
must stay under 2 levels. After an intended change of a figure, rewrite the goldens with
`python tests/content/test_figure_golden.py --update` and look at them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from autograder.units.rnn_prehistory import fault_figure
from autograder.units.rnn_prehistory.lab.record import LabRecord
from autograder.units.rnn_prehistory.sequence_figure import render_sequence_plot

GOLDEN = Path(__file__).resolve().parent / "golden"
FAR, MOST_FAR, MEAN = 48, 0.005, 2.0

# A public-only run's figure: the values run_fault_injection returned, one panel per signal.
RETURNED = {"near_one_log_final": -3.0, "below_one_log_final": -600.0, "above_one_log_final": 47.0,
            "rho0.5_tanh_norm": 1e-30, "rho1.0_tanh_norm": 0.3, "rho1.0_linear_norm": 1.8,
            "rho1.5_tanh_norm": 2.0, "rho1.5_linear_norm": 7e17, "noclip_first_nonfinite_step": 2.0,
            "clip_loss_start": 1e7, "clip_loss_end": 0.01, "clip_max_update_norm": 5.0,
            "vanish_dx1_noclip": 1e-50, "vanish_dx1_clip": 1e-50, "vanish_dxT": 1.0, "bptt_rel_error": 1e-10}


def _dependency(T: int, causal: bool) -> list:
    t, s = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    D = np.exp(-0.4 * np.abs(t - s))
    return np.where(s > t, 0.0, D).tolist() if causal else D.tolist()


SEQUENCE_EXTRAS = {
    "causality": {"rnn": _dependency(8, True), "birnn": _dependency(8, False),
                  "causal_attention": _dependency(8, True), "open_attention": _dependency(8, False)},
    "inference_cost": {"T": [16, 64, 256, 1024], "rnn_bytes": [128, 128, 128, 128],
                       "cache_bytes": [2048, 8192, 32768, 131072], "bytes_per_cached_token": 128},
}

FIGURES = {
    "fault_injection_public_run": lambda: fault_figure.render_fault_plot(LabRecord(seed=7, returned=RETURNED)),
    "sequence_models": lambda: render_sequence_plot(SEQUENCE_EXTRAS),
}


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def differences(drawn: np.ndarray, golden: np.ndarray) -> tuple[float, float]:
    """(share of pixels off by more than FAR in some channel, mean absolute difference)."""
    diff = np.abs(drawn - golden)
    return float(np.mean(diff.max(axis=2) > FAR)), float(diff.mean())


def test_each_figure_matches_its_golden_image():
    for name, draw in FIGURES.items():
        png = draw()
        assert png, f"{name}: nothing drawn"
        drawn, golden = _pixels(png), _pixels((GOLDEN / f"{name}.png").read_bytes())
        assert drawn.shape == golden.shape, f"{name}: {drawn.shape} drawn, {golden.shape} in the golden image"
        far, mean = differences(drawn, golden)
        assert far <= MOST_FAR and mean <= MEAN, (
            f"{name}: {far:.2%} of the pixels differ by more than {FAR} levels (mean {mean:.2f}): "
            f"a change of Pillow or of the figure; look at it, then `python {Path(__file__).name} --update`")


def test_the_comparison_sees_a_changed_figure():
    """The tolerance lets anti-aliasing through, not a missing label or a moved curve."""
    golden = _pixels((GOLDEN / "sequence_models.png").read_bytes())
    blanked = golden.copy()
    h, w, _ = golden.shape
    blanked[h // 4: h // 2, w // 4: w // 3] = 255          # a piece of one heat map gone
    assert differences(blanked, golden)[0] > MOST_FAR
    shifted = np.roll(golden, 3, axis=1)                   # everything 3 pixels to the right
    assert differences(shifted, golden)[0] > MOST_FAR


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    GOLDEN.mkdir(exist_ok=True)
    for name, draw in FIGURES.items():
        (GOLDEN / f"{name}.png").write_bytes(draw())
        print(f"wrote {GOLDEN / name}.png")
