"""A valid alternative fault_injection.py: the whole lab in one function (the random draws
in the docstrings' order, some written another way), another (correct) loss in the
gradient check, a PyTorch-style clip (max_norm / (total + 1e-6), clamped at 1), chains accumulated in the row-vector convention, SVD per step.

It must get full marks: the hidden suite may judge only what the stub's docstrings fix, not how the lab is written.
"""

import bptt
import numpy as np


def log_abs_cumprod(factors):
    f = np.abs(np.asarray(factors, dtype=float))
    logs = np.full(f.shape, -np.inf)
    np.log(f, out=logs, where=f > 0)
    return np.add.accumulate(logs)


def scale_spectral_radius(W, rho):
    return rho * W / np.abs(np.linalg.eigvals(W)).max()


def jacobian_chain_norms(Wh, hs, activation="tanh"):
    T = len(hs) - 1
    G = np.eye(Wh.shape[0])       # (dh_T/dh_t)^T, built as Wh diag(d_{t+1}) ... Wh diag(d_T)
    norms = np.zeros(T)
    for k in range(1, T + 1):
        t = T - k + 1
        d = 1 - hs[t] ** 2 if activation == "tanh" else np.ones(Wh.shape[0])
        G = (Wh * d) @ G
        norms[k - 1] = np.linalg.svd(G, compute_uv=False)[0]
    return norms


def clip_grad_norm(grads, max_norm):
    total = float(np.linalg.norm(np.concatenate([np.ravel(g) for g in grads.values()])))
    coef = min(1.0, max_norm / (total + 1e-6))
    return {k: v * coef for k, v in grads.items()}, total


def _median(values):
    v = np.sort(np.asarray(values, dtype=float))
    n = len(v)
    return float(v[n // 2]) if n % 2 else float(0.5 * (v[n // 2 - 1] + v[n // 2]))


def run_fault_injection(seed=42):
    rng = np.random.default_rng(seed)
    out = {}

    # level 1: the three groups of factors
    for name, (lo, hi) in (("near_one", (0.8, 1.2)), ("below_one", (0.0, 0.8)), ("above_one", (1.0, 1.2))):
        traj = log_abs_cumprod(lo + (hi - lo) * rng.random(500))
        out[f"{name}_log_final"] = float(traj[-1])
        if name == "near_one":
            near_max = float(np.abs(traj).max())

    # level 2: one W0, then per rho its initial states (8 at rho = 1, else 1), one draw each
    W0 = rng.normal(size=(16, 16))
    for rho in (0.5, 1.0, 1.5):
        W = scale_spectral_radius(W0, rho)
        starts = np.tanh(rng.normal(size=(8 if rho == 1.0 else 1, 16)))
        tanh_norms, lin = [], None
        for i, h0 in enumerate(starts):
            hs, hl = [h0], [h0]
            for _ in range(100):
                hs.append(np.tanh(hs[-1] @ W))
                hl.append(hl[-1] @ W)
            tanh_norms.append(jacobian_chain_norms(W, np.array(hs))[-1])
            if i == 0:
                lin = jacobian_chain_norms(W, np.array(hl), activation="linear")[-1]
        out[f"rho{rho}_tanh_norm"] = _median(tanh_norms)
        if rho != 0.5:
            out[f"rho{rho}_linear_norm"] = float(lin)

    # injection 1: linear RNN, batch of 4, gradients summed step by step
    Wh0 = scale_spectral_radius(rng.standard_normal((8, 8)), 1.5)
    Wx0 = rng.normal(size=(4, 8)) / 2
    x, y = rng.normal(size=(4, 20, 4)), rng.normal(size=(4, 8))

    def loss_grads(p):
        Wx, Wh, b = p["Wx"], p["Wh"], p["b"]
        hs = np.zeros((21, 4, 8))
        for t in range(20):
            hs[t + 1] = x[:, t] @ Wx + hs[t] @ Wh + b
        err = (hs[20] - y) / 4
        loss = 2.0 * np.sum(err**2)          # 0.5 / N * sum ||h_T - y||^2 with N = 4
        g = {"Wx": np.zeros((4, 8)), "Wh": np.zeros((8, 8)), "b": np.zeros(8)}
        for t in range(19, -1, -1):
            g["Wx"] += x[:, t].T @ err
            g["Wh"] += hs[t].T @ err
            g["b"] += err.sum(0)
            err = err @ Wh.T
        return float(loss), g

    with np.errstate(all="ignore"):
        p = {"Wx": Wx0, "Wh": Wh0, "b": np.zeros(8)}
        first = float("inf")
        for step in range(100):
            loss, g = loss_grads(p)
            if not np.isfinite(loss):
                first = float(step)
                break
            p = {k: p[k] - 0.05 * g[k] for k in p}
        p = {"Wx": Wx0, "Wh": Wh0, "b": np.zeros(8)}
        losses, norms = [], []
        for _ in range(100):
            loss, g = loss_grads(p)
            losses.append(loss)
            c, _ = clip_grad_norm(g, 5.0)
            norms.append(float(np.sqrt(sum(np.sum(v * v) for v in c.values()))))
            p = {k: p[k] - 0.05 * c[k] for k in p}
        losses.append(loss_grads(p)[0])
    out.update(noclip_first_nonfinite_step=first, clip_loss_start=losses[0], clip_loss_end=losses[-1],
               clip_max_update_norm=max(norms))

    # injection 2: the loss on the last state only
    Wh = scale_spectral_radius(rng.normal(size=(16, 16)), 0.5)
    Wx = rng.normal(size=(4, 16)) * 0.5
    x = rng.normal(size=(1, 100, 4))
    h, cache = bptt.rnn_forward(x, np.zeros((1, 16)), Wx, Wh, np.zeros(16))
    dh = np.zeros_like(h)
    dh[0, -1] = 1.0
    dx, dh0, dWx, dWh, db = bptt.rnn_backward(dh, cache)
    clipped, _ = clip_grad_norm({"dx": dx, "dh0": dh0, "dWx": dWx, "dWh": dWh, "db": db}, 5.0)
    out["vanish_dx1_noclip"] = float(np.linalg.norm(dx[0, 0]))
    out["vanish_dx1_clip"] = float(np.linalg.norm(clipped["dx"][0, 0]))
    out["vanish_dxT"] = float(np.linalg.norm(dx[0, -1]))

    # level 3: gradient check with the loss 0.5 * sum(h**2) over all steps
    N, T, D, H = 2, 12, 4, 8
    x, h0 = rng.normal(size=(N, T, D)), rng.normal(size=(N, H))
    Wx, Wh, b = rng.normal(size=(D, H)) * 0.5, rng.normal(size=(H, H)) * 0.35, rng.normal(size=H) * 0.1
    rng.normal(size=(N, T, H))       # the readout weights of the docstring's loss: this lab uses its own
    h, cache = bptt.rnn_forward(x, h0, Wx, Wh, b)
    _, _, dWx, dWh, db = bptt.rnn_backward(h, cache)
    analytic, numeric = [], []
    for p, g in ((Wx, dWx), (Wh, dWh), (b, db)):
        num = np.zeros_like(p)
        for i in np.ndindex(*p.shape):
            keep = p[i]
            p[i] = keep + 1e-6
            up = 0.5 * np.sum(bptt.rnn_forward(x, h0, Wx, Wh, b)[0] ** 2)
            p[i] = keep - 1e-6
            down = 0.5 * np.sum(bptt.rnn_forward(x, h0, Wx, Wh, b)[0] ** 2)
            p[i] = keep
            num[i] = (up - down) / 2e-6
        analytic.append(g.ravel())
        numeric.append(num.ravel())
    a, n = np.concatenate(analytic), np.concatenate(numeric)
    out["bptt_rel_error"] = float(np.linalg.norm(a - n) / (np.linalg.norm(a) + np.linalg.norm(n)))

    out["near_one_product_stays_bounded"] = bool(
        near_max < 20 and out["below_one_log_final"] < -100 and out["above_one_log_final"] > 20
        and np.isfinite(out["below_one_log_final"]))
    out["rho_below_one_gradient_decays"] = out["rho0.5_tanh_norm"] < 1e-10
    out["rho_above_one_gradient_explodes"] = out["rho1.5_linear_norm"] > 1e10
    out["rho_one_tanh_saturation_still_decays"] = out["rho1.0_tanh_norm"] < out["rho1.0_linear_norm"]
    out["clipping_caps_norm_keeps_training_alive"] = bool(
        first <= 3 and max(norms) <= 5.0 * (1 + 1e-9) and np.isfinite(losses[-1]) and losses[-1] < 0.01 * losses[0])
    out["clipping_does_not_rescue_vanishing"] = (out["vanish_dx1_noclip"] < 1e-10 and out["vanish_dx1_clip"] < 1e-10
                                                 and out["vanish_dxT"] > 1e-3)
    out["bptt_matches_finite_difference"] = out["bptt_rel_error"] < 1e-6
    return out
