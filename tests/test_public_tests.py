"""The public tests, run the way a student runs them (plain pytest, no grader)."""

import subprocess
import sys

from helpers import REPO, SOLUTIONS

PUBLIC = REPO / "assignments" / "rnn_prehistory" / "tests"


def run_public(*args):
    return subprocess.run([sys.executable, "-m", "pytest", str(PUBLIC), "-q", "-p", "no:cacheprovider", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def test_public_tests_pass_on_the_reference():
    proc = run_public("--submission", str(SOLUTIONS))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_every_public_test_fails_on_the_stubs():
    proc = run_public()
    assert proc.returncode == 1
    last = proc.stdout.strip().splitlines()[-1]
    assert "passed" not in last and "failed" in last, last


def test_the_public_run_figure_keeps_the_legends_colours_out_of_the_first_panel():
    """A public-only run draws the first panel's three stars without curves: none of them
    may be painted in a colour the legend gives to something else (clipping, a chain)."""
    import numpy as np

    from autograder.units.rnn_prehistory import fault_figure, raster
    from autograder.units.rnn_prehistory.lab.record import LabRecord

    returned = {"near_one_log_final": -3.0, "below_one_log_final": -600.0, "above_one_log_final": 47.0}
    fig, panels = fault_figure.draw_fault_figure(LabRecord(seed=7, returned=returned))
    assert panels[0].student == returned                      # the three stars are drawn
    image = np.asarray(fig.render())
    left, bottom, width, height = fig.axes[0].box
    h, w = image.shape[:2]
    panel = image[round((1 - bottom - height) * h): round((1 - bottom) * h), round(left * w): round((left + width) * w)]
    legend = {fault_figure.TANH, fault_figure.LINEAR, fault_figure.CLIP, fault_figure.NOCLIP}
    for colour in legend:
        rgb = raster.rgba(colour)[:3]
        painted = int(np.all(panel == rgb, axis=-1).sum())
        assert painted == 0, f"{painted} pixels of the first panel are {colour}, a colour the legend gives to another line"
    for colour in fault_figure.FACTORS.values():                # each star is filled with its own colour
        assert np.all(panel == raster.rgba(colour)[:3], axis=-1).sum() > 20, colour
