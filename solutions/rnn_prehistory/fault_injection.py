"""The fault-injection lab: why gradients vanish or explode through time, measured.

Backpropagation through time multiplies one Jacobian per step (row-vector convention,
h_t = act(h_{t-1} Wh + x_t Wx + b)):

    dh_T/dh_{T-k} = J_T J_{T-1} ... J_{T-k+1},    J_t = dh_t/dh_{t-1} = diag(act'(a_t)) Wh^T

Each factor has two parts: the weight factor Wh^T, whose size is set by the spectral
radius rho = max|eig(Wh)|, and the activation factor diag(act'), which for tanh is
1 - h_t**2 <= 1 and goes to 0 where units saturate. What this lab shows (and what its
checks measure):

- a product of many factors stays of reasonable size only when every factor is near 1;
  work with log|product| (a running sum of logs): a long product underflows to 0.0 (or
  overflows to inf) in float64 long before its logarithm is out of range;
- rho < 1: the gradient vanishes (tanh or not): ||dh_T/dh_0|| ~ 1e-30 at rho = 0.5, T = 100;
- rho > 1: the *weight factor* explodes, which is what a linear RNN measures:
  ||(Wh^T)^100|| >= 1.5^100 = 4e17 at rho = 1.5. A tanh RNN at rho = 1.5 does NOT
  reliably explode: its states grow until tanh saturates and the activation factor
  holds the chain down (measured over 2000 seeds: median 2.4, from 1e-32 up to 1e6, never
  near the linear chain). The course notes (前沿专题·序列建模前史, injection 1) claim a
  tanh RNN at rho = 1.5 explodes; they are wrong;
- rho = 1: the tanh chain still decays (median 0.34) while the linear chain does not
  (median 1.8, never below 1): saturation pushes the product down on its own;
- gradient clipping rescales the whole gradient to norm tau when it is larger: the
  direction is kept, only the size is capped, so training with exploding gradients
  survives; clipping only ever scales down, so it cannot bring back a vanished gradient.

Serves oral-exam questions 2-4 of the course notes.
"""

import statistics

import numpy as np

import bptt

# The lab's settings.
N_FACTORS = 500            # level 1: factors per product
D_STATE, T_STEPS = 16, 100  # level 2: hidden size d and sequence length T
RHOS = (0.5, 1.0, 1.5)     # level 2: spectral radii
N_INITIAL_STATES = 8       # level 2, rho = 1: median over this many initial states
TAU = 5.0                  # clipping threshold (global L2 norm)
CLIP_N, CLIP_H, CLIP_D, CLIP_T = 4, 8, 4, 20   # injection 1: linear RNN, a batch of 4
CLIP_LR, CLIP_STEPS = 0.05, 100     # injection 1: plain SGD
VANISH_H, VANISH_D = 16, 4          # injection 2: tanh RNN sizes (T = T_STEPS)
CHECK_N, CHECK_H, CHECK_D, CHECK_T = 2, 8, 4, 12   # level 3: the gradient check
FD_STEP = 1e-6

SIGNALS = (
    "near_one_product_stays_bounded",
    "rho_below_one_gradient_decays",
    "rho_above_one_gradient_explodes",
    "rho_one_tanh_saturation_still_decays",
    "clipping_caps_norm_keeps_training_alive",
    "clipping_does_not_rescue_vanishing",
    "bptt_matches_finite_difference",
)
FIGURES = (
    "near_one_log_final", "below_one_log_final", "above_one_log_final",
    "rho0.5_tanh_norm", "rho1.0_tanh_norm", "rho1.0_linear_norm", "rho1.5_tanh_norm", "rho1.5_linear_norm",
    "noclip_first_nonfinite_step", "clip_loss_start", "clip_loss_end", "clip_max_update_norm",
    "vanish_dx1_noclip", "vanish_dx1_clip", "vanish_dxT",
    "bptt_rel_error",
)


def log_abs_cumprod(factors):
    """Running log-magnitude of a product (level 1 of the lab).

        out[t] = log|factors[0] * factors[1] * ... * factors[t]| = sum_{s<=t} log|factors[s]|

    Inputs:
    - factors: shape (T,), real numbers (any sign)

    Returns:
    - out: shape (T,), float64

    Computed as a running sum of logs: the product itself underflows to 0 (or overflows
    to inf) long before its logarithm is out of range, e.g. 0.1**500 == 0.0 in float64,
    so np.log(np.cumprod(...)) returns -inf where the true value is -1151.3.
    A zero factor makes the product 0 from there on: out is -inf from that index on,
    without a RuntimeWarning.

    Oral-exam question 2: a product of T factors keeps a reasonable size only when every
    factor is close to 1 (log|product| is a random walk with drift T * E[log|factor|]).
    """
    # TODO: out = cumsum(log|factors|); silence numpy's divide-by-zero warning for log(0) = -inf.
    ### BEGIN SOLUTION
    with np.errstate(divide="ignore"):
        return np.cumsum(np.log(np.abs(np.asarray(factors, dtype=float))))
    ### END SOLUTION


def scale_spectral_radius(W, rho):
    """Rescale a square matrix to a given spectral radius.

        W_rho = W * rho / max_i |lambda_i(W)|

    Inputs:
    - W: shape (H, H)
    - rho: the target spectral radius, a float > 0

    Returns:
    - W_rho: shape (H, H), a new array (W is not modified)

    The spectral radius is the largest *modulus* of the (possibly complex) eigenvalues:
    not the largest singular value (that is the spectral norm, >= the radius), and not
    the largest real part. It decides whether W^k grows or decays as k -> infinity.

    Oral-exam question 2: rho > 1 pushes the weight factor of the chain up, rho < 1 down.
    """
    # TODO: divide W by max|eig(W)| (np.linalg.eigvals, complex moduli), multiply by rho.
    ### BEGIN SOLUTION
    return W * (rho / np.max(np.abs(np.linalg.eigvals(W))))
    ### END SOLUTION


def jacobian_chain_norms(Wh, hs, activation="tanh"):
    """Spectral norms of the BPTT Jacobian chain, k = 1..T steps back.

        J_t = dh_t/dh_{t-1} = diag(act'(a_t)) Wh^T,   tanh'(a_t) = 1 - h_t**2
        norms[k-1] = || J_T J_{T-1} ... J_{T-k+1} ||_2     (largest singular value)

    Inputs:
    - Wh: recurrent weights, shape (H, H)
    - hs: hidden states h_0, h_1, ..., h_T of one sequence, shape (T+1, H)
    - activation: "tanh" or "linear"

    Returns:
    - norms: shape (T,), norms[k-1] = ||dh_T/dh_{T-k}||_2

    Here h_t = act(a_t), a_t = h_{t-1} Wh + (input terms), and J_t is the one-step
    Jacobian; the derivative at step t uses h_t, the state the step produced.
    activation="linear" means act(a) = a: the chain is the weight factor alone,
    ||(Wh^T)^k||_2, whatever the states are.

    Oral-exam question 2: each factor is an activation part (<= 1 for tanh, -> 0 when
    saturated) times a weight part (size set by the spectral radius).
    """
    # TODO: multiply the step Jacobians diag(1 - h_t^2) Wh^T from t = T back to 1 (identity
    # for "linear" instead of the diag), recording the spectral norm of each partial product.
    ### BEGIN SOLUTION
    hs = np.asarray(hs, dtype=float)
    T, H = hs.shape[0] - 1, hs.shape[1]
    if activation == "tanh":
        dact = 1.0 - hs[1:] ** 2                      # (T, H): tanh'(a_t) for t = 1..T
    elif activation == "linear":
        dact = np.ones((T, H))
    else:
        raise ValueError(f"activation must be 'tanh' or 'linear', got {activation!r}")
    products = np.empty((T, H, H))
    chain = np.eye(H)
    for k in range(1, T + 1):
        t = T - k + 1
        chain = chain @ (dact[t - 1][:, None] * Wh.T)  # ... J_{t+1} J_t
        products[k - 1] = chain
    return np.linalg.norm(products, ord=2, axis=(1, 2)) if T else np.zeros(0)
    ### END SOLUTION


def clip_grad_norm(grads, max_norm):
    """Clip a set of gradients by their global L2 norm (Pascanu et al., 2013).

        total_norm = sqrt(sum_k ||grads[k]||_F^2)
        clipped[k] = grads[k] * min(1, max_norm / total_norm)

    Inputs:
    - grads: dict name -> array (any shapes)
    - max_norm: float > 0

    Returns a tuple of:
    - clipped: a new dict with the same keys and shapes (grads is not modified)
    - total_norm: the global norm before clipping, a float

    One factor for all arrays: the direction of the whole gradient is kept, only its
    length is capped at max_norm. (Clipping each array by its own norm changes the
    direction and lets the total exceed max_norm.) Below the threshold nothing changes.

    Oral-exam question 4: clipping tames explosion because the direction still carries
    information; it cannot fix vanishing, because it only ever scales down.
    """
    clipped, total_norm = None, None
    # TODO: total_norm over all arrays; if it exceeds max_norm scale every array by
    # max_norm / total_norm; return copies in a new dict.
    ### BEGIN SOLUTION
    total_norm = float(np.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values())))
    scale = max_norm / total_norm if total_norm > max_norm else 1.0
    clipped = {name: np.asarray(g, dtype=float) * scale for name, g in grads.items()}
    ### END SOLUTION
    return clipped, total_norm


def linear_rnn_loss_and_grads(params, x, y):
    """Given helper (not graded): loss and gradients of a linear RNN, for injection 1.

        h_0 = 0,  h_t = x_t Wx + h_{t-1} Wh + b,  L = 0.5 / N * sum_n ||h_T[n] - y[n]||^2

    Inputs:
    - params: dict with "Wx" (D, H), "Wh" (H, H), "b" (H,)
    - x: inputs, shape (N, T, D); y: targets for the last state, shape (N, H)

    Returns a tuple of:
    - loss: a float (inf or nan once the weights have blown up)
    - grads: dict with the keys and shapes of params
    """
    Wx, Wh, b = params["Wx"], params["Wh"], params["b"]
    N, T, _ = x.shape
    with np.errstate(all="ignore"):             # an exploding run overflows on purpose
        hs = np.zeros((N, T + 1, Wh.shape[0]))
        for t in range(T):
            hs[:, t + 1] = x[:, t] @ Wx + hs[:, t] @ Wh + b
        resid = hs[:, T] - y
        loss = 0.5 * float(np.sum(resid**2)) / N
        da = np.empty((N, T, Wh.shape[0]))      # dL/da_t = dL/dh_t (no activation)
        dh = resid / N
        for t in reversed(range(T)):
            da[:, t] = dh
            dh = dh @ Wh.T
        grads = {"Wx": np.einsum("ntd,nth->dh", x, da),
                 "Wh": np.einsum("nti,ntj->ij", hs[:, :T], da),
                 "b": da.sum(axis=(0, 1))}
    return loss, grads


def product_stability(rng):
    """Level 1: the stability of a product of 500 random factors.

        near_one_product_stays_bounded = (max_t |near[t]| < 20 and below[-1] < -100
                                          and above[-1] > 20, all finite)

    Inputs:
    - rng: a numpy Generator

    Returns a dict with the floats near_one_log_final, below_one_log_final,
    above_one_log_final (each log_abs_cumprod(...)[-1]) and the bool
    near_one_product_stays_bounded.

    Draw 500 factors from U(0.8, 1.2) ("near one"), then 500 from U(0, 0.8) ("below
    one"), then 500 from U(1.0, 1.2) ("above one"), and take log_abs_cumprod of each
    (near, below, above). Expected: near one drifts slowly (final value about
    -3.4 +- 2.6), below one falls linearly in log (about -611), above one rises linearly
    (about +47).

    Oral-exam question 2.
    """
    out = None
    # TODO: three draws of N_FACTORS factors, log_abs_cumprod of each, the criterion above.
    ### BEGIN SOLUTION
    near = log_abs_cumprod(rng.uniform(0.8, 1.2, size=N_FACTORS))
    below = log_abs_cumprod(rng.uniform(0.0, 0.8, size=N_FACTORS))
    above = log_abs_cumprod(rng.uniform(1.0, 1.2, size=N_FACTORS))
    finite = bool(np.all(np.isfinite(near)) and np.isfinite(below[-1]) and np.isfinite(above[-1]))
    out = {"near_one_log_final": float(near[-1]), "below_one_log_final": float(below[-1]),
           "above_one_log_final": float(above[-1])}
    out["near_one_product_stays_bounded"] = bool(
        finite and np.max(np.abs(near)) < 20 and below[-1] < -100 and above[-1] > 20)
    ### END SOLUTION
    return out


def spectral_sweep(rng):
    """Level 2: the norm of dh_T/dh_0 for spectral radii 0.5, 1.0, 1.5, tanh and linear.

        tanh:   h_t = tanh(h_{t-1} W)        linear: h_t = h_{t-1} W
        rho_below_one_gradient_decays         = rho0.5_tanh_norm < 1e-10
        rho_above_one_gradient_explodes       = rho1.5_linear_norm > 1e10
        rho_one_tanh_saturation_still_decays  = rho1.0_tanh_norm < rho1.0_linear_norm

    Inputs:
    - rng: a numpy Generator

    Returns a dict with the floats rho0.5_tanh_norm, rho1.0_tanh_norm,
    rho1.0_linear_norm, rho1.5_tanh_norm, rho1.5_linear_norm and the three bools above.

    d = 16, T = 100. Draw W0 ~ N(0, 1) of shape (d, d) once; for each rho in RHOS (in
    this order) let W = scale_spectral_radius(W0, rho) and draw initial states
    h_0 = tanh(z), z ~ N(0, 1) of shape (d,): one state for rho = 0.5 and 1.5,
    N_INITIAL_STATES = 8 states (one draw of shape (8, d)) for rho = 1.0. Roll out the
    tanh and the linear recurrence above for t = 1..T from each h_0, and take
    ||dh_T/dh_0||_2 = jacobian_chain_norms(W, hs, activation)[-1]. At rho = 1.0 report
    the median over the 8 initial states (the linear chain does not depend on the
    states: one call is enough).

    rho1.5_tanh_norm is reported, not judged: a tanh RNN at rho = 1.5 saturates, and
    saturation (tanh' -> 0) holds the chain down, so it does not reliably explode.

    Oral-exam question 2: which part of each factor pushes the product down or up.
    """
    out = None
    # TODO: W0, then per rho: scale, initial state(s), tanh and linear rollouts,
    # jacobian_chain_norms(...)[-1]; medians at rho = 1; the three criteria above.
    ### BEGIN SOLUTION
    W0 = rng.normal(size=(D_STATE, D_STATE))
    out = {}
    for rho in RHOS:
        W = scale_spectral_radius(W0, rho)
        h0s = np.tanh(rng.normal(size=(N_INITIAL_STATES if rho == 1.0 else 1, D_STATE)))
        tanh_norms = [jacobian_chain_norms(W, _rollout(W, h0, "tanh"), "tanh")[-1] for h0 in h0s]
        linear_norm = jacobian_chain_norms(W, _rollout(W, h0s[0], "linear"), "linear")[-1]
        out[f"rho{rho}_tanh_norm"] = float(statistics.median(tanh_norms))
        out[f"rho{rho}_linear_norm"] = float(linear_norm)
    del out["rho0.5_linear_norm"]
    out["rho_below_one_gradient_decays"] = bool(out["rho0.5_tanh_norm"] < 1e-10)
    out["rho_above_one_gradient_explodes"] = bool(out["rho1.5_linear_norm"] > 1e10)
    out["rho_one_tanh_saturation_still_decays"] = bool(out["rho1.0_tanh_norm"] < out["rho1.0_linear_norm"])
    ### END SOLUTION
    return out


### BEGIN SOLUTION
def _rollout(W, h0, activation):
    """h_0 = h0, h_t = act(h_{t-1} W) for t = 1..T_STEPS; returns (T_STEPS + 1, H)."""
    hs = np.empty((T_STEPS + 1, h0.shape[0]))
    hs[0] = h0
    for t in range(T_STEPS):
        a = hs[t] @ W
        hs[t + 1] = np.tanh(a) if activation == "tanh" else a
    return hs
### END SOLUTION


def clipping_experiment(rng):
    """Injection 1: a linear RNN at rho = 1.5, trained with and without clipping.

        clipping_caps_norm_keeps_training_alive = (noclip_first_nonfinite_step <= 3
            and clip_max_update_norm <= TAU * (1 + 1e-9)
            and clip_loss_end finite and clip_loss_end < 1e-2 * clip_loss_start)

    Inputs:
    - rng: a numpy Generator

    Returns a dict with the floats noclip_first_nonfinite_step, clip_loss_start,
    clip_loss_end, clip_max_update_norm and the bool above.

    H = 8, D = 4, T = 20, a batch of N = 4 sequences. Draw, in this order, Wh =
    scale_spectral_radius(N(0,1) of shape (H, H), 1.5), Wx ~ N(0, 1) / sqrt(D) of shape
    (D, H), x ~ N(0, 1) of shape (N, T, D), y ~ N(0, 1) of shape (N, H); b = 0. Train {Wx, Wh, b} from this same start twice
    with plain SGD, lr = 0.05, 100 steps, loss from linear_rnn_loss_and_grads:
    - without clipping: param -= lr * grad; record the index s of the first step whose
      loss is not finite (s = 0 is the starting loss), inf if none;
    - with clipping: clipped, _ = clip_grad_norm(grads, TAU); param -= lr * clipped;
      record the starting loss, the loss after the 100th update, and the largest global
      norm of a clipped gradient (the update direction, before lr).

    Oral-exam question 4: with clipping the update keeps the gradient's direction and
    training converges; without it one step throws the weights to infinity.
    """
    out = None
    # TODO: draw the start, run the two SGD loops (stop the unclipped one at the first
    # non-finite loss), compute the four figures and the criterion.
    ### BEGIN SOLUTION
    Wh = scale_spectral_radius(rng.normal(size=(CLIP_H, CLIP_H)), 1.5)
    Wx = rng.normal(size=(CLIP_D, CLIP_H)) / np.sqrt(CLIP_D)
    start = {"Wx": Wx, "Wh": Wh, "b": np.zeros(CLIP_H)}
    x = rng.normal(size=(CLIP_N, CLIP_T, CLIP_D))
    y = rng.normal(size=(CLIP_N, CLIP_H))

    noclip_losses, params = [], dict(start)
    for _ in range(CLIP_STEPS):
        loss, grads = linear_rnn_loss_and_grads(params, x, y)
        noclip_losses.append(loss)
        if not np.isfinite(loss):
            break
        with np.errstate(all="ignore"):
            params = {k: params[k] - CLIP_LR * grads[k] for k in params}
    nonfinite = [s for s, loss in enumerate(noclip_losses) if not np.isfinite(loss)]

    clip_losses, update_norms, params = [], [], dict(start)
    for _ in range(CLIP_STEPS):
        loss, grads = linear_rnn_loss_and_grads(params, x, y)
        clip_losses.append(loss)
        clipped, _ = clip_grad_norm(grads, TAU)
        with np.errstate(over="ignore", invalid="ignore"):   # a broken clip must not stop the lab
            update_norms.append(float(np.sqrt(sum(np.sum(g**2) for g in clipped.values()))))
            params = {k: params[k] - CLIP_LR * clipped[k] for k in params}
    clip_losses.append(linear_rnn_loss_and_grads(params, x, y)[0])

    out = {"noclip_first_nonfinite_step": float(nonfinite[0]) if nonfinite else float("inf"),
           "clip_loss_start": float(clip_losses[0]), "clip_loss_end": float(clip_losses[-1]),
           "clip_max_update_norm": float(max(update_norms))}
    out["clipping_caps_norm_keeps_training_alive"] = bool(
        out["noclip_first_nonfinite_step"] <= 3 and out["clip_max_update_norm"] <= TAU * (1 + 1e-9)
        and np.isfinite(out["clip_loss_end"]) and out["clip_loss_end"] < 1e-2 * out["clip_loss_start"])
    ### END SOLUTION
    return out


def vanishing_experiment(rng):
    """Injection 2: a tanh RNN at rho = 0.5; clipping cannot bring back a vanished gradient.

        vanish_dx1_noclip = ||dx[:, 0]||,  vanish_dx1_clip = ||clipped["x"][:, 0]||,
        vanish_dxT = ||dx[:, T-1]||
        (dx is the gradient of the inputs x_1..x_T; dh0, the initial state's, is not x_1's)
        clipping_does_not_rescue_vanishing = (vanish_dx1_noclip < 1e-10
            and vanish_dx1_clip < 1e-10 and vanish_dxT > 1e-3)

    Inputs:
    - rng: a numpy Generator

    Returns a dict with the three floats and the bool above.

    H = 16, D = 4, T = 100, one sequence. Draw, in this order, Wh = scale_spectral_radius(N(0,1)
    of shape (H, H), 0.5), Wx ~ N(0, 1) / sqrt(D) of shape (D, H), x ~ N(0, 1) of shape
    (1, T, D); b = 0, h0 = 0. Run bptt.rnn_forward, take the loss L = sum(h_T) (the last state only:
    dh is zero except dh[:, T-1] = 1) and bptt.rnn_backward. Clip the whole gradient,
    clipped, _ = clip_grad_norm({"x": dx, "h0": dh0, "Wx": dWx, "Wh": dWh, "b": db}, TAU).

    Oral-exam question 3: dL/dh_T is not small, but dL/dx_1 is ~0: the model has
    forgotten x_1, and no gradient step can teach it to remember (the path is gone).
    Oral-exam question 4: clipping only scales down.
    """
    out = None
    # TODO: draw, forward, backward with dh on the last step only, clip, three norms.
    ### BEGIN SOLUTION
    Wh = scale_spectral_radius(rng.normal(size=(VANISH_H, VANISH_H)), 0.5)
    Wx = rng.normal(size=(VANISH_D, VANISH_H)) / np.sqrt(VANISH_D)
    x = rng.normal(size=(1, T_STEPS, VANISH_D))
    h, cache = bptt.rnn_forward(x, np.zeros((1, VANISH_H)), Wx, Wh, np.zeros(VANISH_H))
    dh = np.zeros_like(h)
    dh[:, -1] = 1.0
    dx, dh0, dWx, dWh, db = bptt.rnn_backward(dh, cache)
    clipped, _ = clip_grad_norm({"x": dx, "h0": dh0, "Wx": dWx, "Wh": dWh, "b": db}, TAU)
    out = {"vanish_dx1_noclip": float(np.linalg.norm(dx[:, 0])),
           "vanish_dx1_clip": float(np.linalg.norm(clipped["x"][:, 0])),
           "vanish_dxT": float(np.linalg.norm(dx[:, -1]))}
    out["clipping_does_not_rescue_vanishing"] = bool(
        out["vanish_dx1_noclip"] < 1e-10 and out["vanish_dx1_clip"] < 1e-10 and out["vanish_dxT"] > 1e-3)
    ### END SOLUTION
    return out


def bptt_gradient_check(rng):
    """Level 3: BPTT against central differences on a small Elman RNN.

        L = sum_{n,t,i} R[n,t,i] * h[n,t,i]      (so dh = R)
        bptt_rel_error = ||g - g_num|| / (||g|| + ||g_num||)
        bptt_matches_finite_difference = bptt_rel_error < 1e-6

    Inputs:
    - rng: a numpy Generator

    Returns a dict with the float bptt_rel_error and the bool above.

    N = 2, H = 8, D = 4, T = 12. Draw, in this order, x ~ N(0,1) (N, T, D), h0 ~ N(0,1) (N, H),
    Wx ~ N(0,1)/sqrt(D) (D, H), Wh ~ N(0,1)/sqrt(H) (H, H), b ~ 0.1 N(0,1) (H,) and
    readout weights R ~ N(0,1) (N, T, H). The loss L sums one term per step, with h from
    bptt.rnn_forward. g = (dWx, dWh, db) from bptt.rnn_backward(R, cache); g_num = the
    same three by central differences with step h = 1e-6 (bptt.numerical_gradient).
    bptt_rel_error is taken over all parameters together (the whole-vector ratio:
    CS231n's element-wise rel_error at this step is dominated by entries whose gradient
    is ~0 and fails on a few seeds, so it is not the criterion).

    Oral-exam questions 1 and 3: unrolled in time the RNN is a deep network with shared
    weights whose gradient is the sum over steps; the check validates both at once.
    """
    # TODO: draw, analytic gradient, numerical gradient of each parameter, the ratio.
    ### BEGIN SOLUTION
    x = rng.normal(size=(CHECK_N, CHECK_T, CHECK_D))
    h0 = rng.normal(size=(CHECK_N, CHECK_H))
    params = [rng.normal(size=(CHECK_D, CHECK_H)) / np.sqrt(CHECK_D),
              rng.normal(size=(CHECK_H, CHECK_H)) / np.sqrt(CHECK_H),
              0.1 * rng.normal(size=CHECK_H)]
    R = rng.normal(size=(CHECK_N, CHECK_T, CHECK_H))

    def loss(_):
        return float(np.sum(R * bptt.rnn_forward(x, h0, *params)[0]))

    _, cache = bptt.rnn_forward(x, h0, *params)
    g = np.concatenate([d.ravel() for d in bptt.rnn_backward(R, cache)[2:]])
    g_num = np.concatenate([bptt.numerical_gradient(loss, p, FD_STEP).ravel() for p in params])
    err = float(np.linalg.norm(g - g_num) / (np.linalg.norm(g) + np.linalg.norm(g_num)))
    return {"bptt_rel_error": err, "bptt_matches_finite_difference": bool(err < 1e-6)}
    ### END SOLUTION


def run_fault_injection(seed=42):
    """The whole lab with one seed: levels 1-3 and the two fault injections.

    Inputs:
    - seed: an int

    Returns one flat dict: the seven bools named in SIGNALS and the sixteen floats named
    in FIGURES (other keys, like the loss curves, may be added).

    rng = np.random.default_rng(seed) feeds, in this order, product_stability,
    spectral_sweep, clipping_experiment, vanishing_experiment and bptt_gradient_check,
    and each experiment draws exactly what its docstring lists, in that order. The lab is
    so a fixed procedure: the grader runs it on the same seed and compares your figures
    with its own (within a relative 1e-5, the size of round-off; bptt_rel_error, itself a
    round-off, and clip_loss_end, the end of 100 chaotic SGD steps, only by their
    criteria). Plausible figures measured another way do not pass.
    Every experiment reaches its primitives through their module-level names
    (scale_spectral_radius(...), jacobian_chain_norms(...), clip_grad_norm(...),
    log_abs_cumprod(...), bptt.rnn_forward(...), bptt.rnn_backward(...)): the grader
    replaces one of them with a broken version and checks that the matching signal
    turns false. A lab that returns constants, or recomputes a primitive inline,
    earns nothing.

    Oral-exam questions 2-4.
    """
    # TODO: one Generator, the five experiments in order, merged into one dict.
    ### BEGIN SOLUTION
    rng = np.random.default_rng(seed)
    out = {}
    for experiment in (product_stability, spectral_sweep, clipping_experiment, vanishing_experiment,
                       bptt_gradient_check):
        out.update(experiment(rng))
    return out
    ### END SOLUTION
