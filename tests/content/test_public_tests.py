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


def _called_functions(path, fixture: str) -> set[str]:
    """Names `fixture.<name>` that a test file uses (the topic module's fixture)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == fixture}


def test_every_student_function_is_called_by_a_public_test_of_its_topic():
    """A function no public test of its own topic calls scores the topic's public points even
    when it is a NameError (reported only later, or under another topic)."""
    from helpers import UNIT

    missing = [f"{topic.id}: {topic.module}.{name}" for topic in UNIT.topics
               for name in topic.functions
               if name not in _called_functions(UNIT.test_file(topic.id, "public"), topic.module)]
    assert not missing, f"no public test of its topic calls: {missing}"


def test_the_public_bptt_backward_vectors_are_pytorchs():
    """The expected gradients written into test_bptt.py are autograd's, for the full and the
    truncated (k = 2: the state detached at t = 2) backward pass."""
    import importlib.util

    import numpy as np
    import torch

    spec = importlib.util.spec_from_file_location("public_test_bptt", PUBLIC / "test_bptt.py")
    public = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(public)

    def autograd(k):
        x, h0, Wx, Wh, b = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in
                            (public.SEQ_X, public.SEQ_H0, public.SEQ_WX, public.SEQ_WH, public.SEQ_B))
        h, states = h0, []
        for t in range(x.shape[1]):
            if k is not None and t and t % k == 0:
                h = h.detach()
            h = torch.tanh(x[:, t] @ Wx + h @ Wh + b)
            states.append(h)
        loss = (torch.tensor(public.SEQ_R, dtype=torch.float64) * torch.stack(states, 1)).sum()
        return dict(zip(("dx", "dh0", "dWx", "dWh", "db"), torch.autograd.grad(loss, [x, h0, Wx, Wh, b])))

    for k, written in ((None, public.FULL_BPTT), (2, public.TRUNCATED_K2)):
        for name, grad in autograd(k).items():
            # 12 decimals were written (5e-13 of rounding) and autograd rounds to ~1e-15 in any order
            np.testing.assert_allclose(written[name], grad.numpy(), rtol=0, atol=1e-11, err_msg=f"k={k} {name}")


def test_the_public_tests_expected_values_are_the_generators():
    """The blocks of expected values in the public tests are what scripts/make_public_literals.py
    computes with PyTorch from the inputs above them (`make literals`)."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "make_public_literals.py"), "--check"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_drift_check_sees_a_changed_expected_value():
    sys.path.insert(0, str(REPO / "scripts"))
    import make_public_literals as literals

    values = literals.attention(literals.load(PUBLIC / "test_attention.py"))
    assert literals.drift(literals.block(values), values) == []
    moved = {name: value.clone() for name, value in values.items()}
    moved["ALPHA"][0, 1] *= 1 + 1e-15                   # what another BLAS kernel may do: no drift
    assert literals.drift(literals.block(moved), values) == []
    moved["ALPHA"][0, 1] *= 1 + 1e-9
    assert literals.drift(literals.block(moved), values) == ["ALPHA: off by 3.9e-11"]
    del moved["CONTEXT"]
    assert "CONTEXT: missing or of another shape" in literals.drift(literals.block(moved), values)
