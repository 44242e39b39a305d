"""Public tests for gru_lstm.py: small fixed inputs with expected values, and shapes.

Run them with `pytest assignments/rnn_prehistory/tests/test_gru_lstm_step.py`. The expected
values were computed with PyTorch autograd (float64) from the equations in the docstrings,
rounded to 13 significant digits. The hidden tests check the same functions on random
inputs and every gradient with finite differences, and tell you when your GRU or LSTM
follows another library's convention (PyTorch, d2l) instead of this exercise's.
"""

import numpy as np

from autograder.i18n import _

# Inputs: evenly spaced numbers, as in CS231n's notebooks. N = 2, D = 3, H = 2.
N, D, H = 2, 3, 2
X = np.linspace(-0.4, 0.6, num=N * D).reshape(N, D)
PREV_H = np.linspace(-0.3, 0.5, num=N * H).reshape(N, H)
DNEXT_H = np.linspace(-1.0, 1.0, num=N * H).reshape(N, H)

# GRU: blocks u, r, c of width H.
GRU_WX = np.linspace(-0.5, 0.4, num=D * 3 * H).reshape(D, 3 * H)
GRU_WH = np.linspace(-0.3, 0.6, num=H * 3 * H).reshape(H, 3 * H)
GRU_B = np.linspace(-0.2, 0.3, num=3 * H)

# LSTM: blocks i, f, o, g of width H.
PREV_C = np.linspace(-0.6, 0.4, num=N * H).reshape(N, H)
DNEXT_C = np.linspace(0.5, -0.5, num=N * H).reshape(N, H)
LSTM_WX = np.linspace(-0.5, 0.5, num=D * 4 * H).reshape(D, 4 * H)
LSTM_WH = np.linspace(-0.4, 0.3, num=H * 4 * H).reshape(H, 4 * H)
LSTM_B = np.linspace(-0.3, 0.4, num=4 * H)

# LSTM over a sequence of T = 3 steps (same weights as the step).
T = 3
SEQ_X = np.linspace(-0.5, 0.7, num=N * T * D).reshape(N, T, D)
SEQ_H0 = np.linspace(-0.2, 0.3, num=N * H).reshape(N, H)
SEQ_DH = np.linspace(-0.6, 0.9, num=N * T * H).reshape(N, T, H)

# GRU step: next_h and the gradients of sum(DNEXT_H * next_h).
GRU_NEXT_H = np.array([
    [1.107272462169e-02, 1.656222526614e-01],
    [3.397451233316e-01, 5.571048139407e-01]]).reshape(2, 2)
GRU_DX = np.array([
    [2.626607466139e-01, 2.897019508515e-03, -2.568667075969e-01],
    [-1.371938129440e-01, 1.997606338912e-02, 1.771459397222e-01]]).reshape(2, 3)
GRU_DPREV_H = np.array([
    [-4.368574709403e-01, -3.824468700291e-01],
    [1.941735092072e-01, 6.795231589664e-01]]).reshape(2, 2)
GRU_DWX = np.array([
    [6.249942716035e-02, 1.803043188141e-02, -4.938020593318e-04, 4.611150776868e-03, 2.168372219383e-01, 1.245842599041e-01],
    [3.727460900096e-02, 1.776413409427e-02, 3.800264267210e-04, 1.093653741601e-02, 1.418619546789e-01, 1.532552997208e-01],
    [1.204979084158e-02, 1.749783630713e-02, 1.253854912774e-03, 1.726192405515e-02, 6.688668741945e-02, 1.819263395376e-01]]).reshape(3, 6)
GRU_DWH = np.array([
    [4.854815243159e-02, 1.595307895372e-02, -1.962050288358e-04, 5.855852534756e-03, 9.447553410815e-02, 6.495513651180e-02],
    [1.491506155241e-02, 1.559801523753e-02, 9.688996192346e-04, 1.428970138695e-02, 4.251339291602e-02, 9.390634680380e-02]]).reshape(2, 6)
GRU_DB = np.array([-1.261240907969e-01, -1.331488935712e-03, 4.369142430264e-03, 3.162693319571e-02, -3.748763362972e-01, 1.433551990836e-01])

# LSTM step: next_h, next_c and the gradients of sum(DNEXT_H * next_h) + sum(DNEXT_C * next_c).
LSTM_NEXT_H = np.array([
    [-7.358319500073e-02, 4.575807595402e-02],
    [1.454403443215e-01, 2.915556701393e-01]]).reshape(2, 2)
LSTM_NEXT_C = np.array([
    [-1.296540926039e-01, 7.838629967555e-02],
    [2.593395435335e-01, 5.121704639023e-01]]).reshape(2, 2)
LSTM_DX = np.array([
    [2.847884326549e-06, -3.847630010573e-03, -7.698107905473e-03],
    [-3.680892167115e-02, 7.515427666688e-03, 5.183977700452e-02]]).reshape(2, 3)
LSTM_DPREV_H = np.array([
    [-1.509860210361e-03, -5.642706484220e-03],
    [-2.209246699971e-02, 2.548233462290e-02]]).reshape(2, 2)
LSTM_DPREV_C = np.array([
    [-3.317795884414e-02, -1.508966187186e-02],
    [5.837329861497e-03, -1.018957185081e-02]]).reshape(2, 2)
LSTM_DWX = np.array([
    [2.669479713866e-03, 5.039927019054e-04, -3.607209324495e-03, -1.099452070440e-03, -8.498346961628e-03, 2.479655937378e-02, 1.135722603840e-02, 3.792300977008e-03],
    [1.840431541530e-03, -7.359117892440e-04, -1.742974823802e-03, -1.127800145315e-03, 1.956368729878e-03, 4.579470471848e-02, 6.613569284539e-03, 5.886390120157e-04],
    [1.011383369194e-03, -1.975816280393e-03, 1.212596768910e-04, -1.156148220190e-03, 1.241108442138e-02, 6.679285006317e-02, 1.869912530680e-03, -2.615022952976e-03]]).reshape(3, 8)
LSTM_DWH = np.array([
    [2.142579697787e-03, 1.035755985966e-04, -2.688565371581e-03, -9.851651945230e-04, -4.649998496029e-03, 2.787420426133e-02, 8.777629602504e-03, 2.481028100398e-03],
    [1.037182134673e-03, -1.549630389603e-03, -2.029193706569e-04, -1.022962627689e-03, 9.289622425979e-03, 5.587173138759e-02, 2.452753930692e-03, -1.790521186258e-03]]).reshape(2, 8)
LSTM_DB = np.array([-4.145240861680e-03, -6.199522455747e-03, 9.321172503466e-03, -1.417403743737e-04, 5.227357845753e-02, 1.049907267235e-01, -2.371828376929e-02, -1.601830982496e-02])

# LSTM sequence: h and the gradients of sum(SEQ_DH * h).
SEQ_H = np.array([
    [6.012388072294e-02, 7.070780298752e-02],
    [9.673913780326e-02, 1.267086080656e-01],
    [1.259973983545e-01, 1.751379403015e-01],
    [9.565105645713e-02, 1.375368857106e-01],
    [1.387879665709e-01, 2.064438268233e-01],
    [1.622299271088e-01, 2.505748429088e-01]]).reshape(2, 3, 2)
SEQ_DX = np.array([
    [1.041143543901e-01, -3.926023722207e-02, -1.826348288343e-01],
    [4.495284720409e-02, -1.118055926483e-02, -6.731396573376e-02],
    [-2.506448312670e-03, 1.421700975228e-03, 5.349850263126e-03],
    [-1.051441813030e-01, 2.313096008091e-02, 1.514061014648e-01],
    [-1.615174915238e-01, 2.389796293319e-02, 2.093134173902e-01],
    [-1.672505096822e-01, 1.592983652758e-02, 1.991101827373e-01]]).reshape(2, 3, 3)
SEQ_DH0 = np.array([
    [5.541514042443e-02, -9.847358790598e-02],
    [-6.245331362977e-02, 7.522867145559e-02]]).reshape(2, 2)
SEQ_DWX = np.array([
    [5.809360483502e-02, 8.954750781135e-02, 2.094854195719e-02, 3.561027868977e-02, 5.284107048481e-02, 8.620144541627e-02, 2.206986929169e-01, 2.170151351046e-01],
    [6.335532663783e-02, 1.041271160174e-01, 2.337821683002e-02, 4.098332143955e-02, 5.647140179827e-02, 9.735979735775e-02, 2.209145845716e-01, 2.355108814893e-01],
    [6.861704844063e-02, 1.187067242235e-01, 2.580789170284e-02, 4.635636418934e-02, 6.010173311173e-02, 1.085181492992e-01, 2.211304762263e-01, 2.540066278739e-01]]).reshape(3, 8)
SEQ_DWH = np.array([
    [1.697340937615e-02, 3.153472439858e-02, 4.535573764656e-03, 9.131281383889e-03, 1.274637073973e-02, 2.511648750629e-02, 6.643216586074e-02, 8.061246047738e-02],
    [2.206114728794e-02, 4.896608525956e-02, 6.787448616542e-03, 1.341965696503e-02, 1.550102443861e-02, 3.560785646663e-02, 5.706833942949e-02, 9.702472293478e-02]]).reshape(2, 8)
SEQ_DB = np.array([7.454105887308e-02, 2.065444495860e-01, 3.442039403163e-02, 7.611810562198e-02, 5.142969360734e-02, 1.580766525043e-01, 3.058465108143e-03, 2.620230737825e-01])


def fresh(*arrays):
    """Copies of the inputs, so that a function that modifies its arguments cannot spoil other tests."""
    return [a.copy() for a in arrays]


def check(name, actual, expected, hint=""):
    """Shape first, then values (13 significant digits were stored, so 1e-9 is generous: any summation
    order adds ~1e-15 absolute to those 5e-14 relative, below atol 1e-12 where an entry is near 0)."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, \
        _("{what} has shape {got}, expected {expected}").format(what=name, got=actual.shape, expected=expected.shape)
    assert np.allclose(actual, expected, rtol=1e-9, atol=1e-12), _wrong_values(name, actual, expected, hint)


def _wrong_values(name, actual, expected, hint):
    """The message of a wrong result: its largest difference, then the hint if there is one."""
    difference = f"{np.max(np.abs(actual - expected)):.2e}"
    if hint:
        return _("{name} is wrong (largest difference {difference}): {hint}").format(
            name=name, difference=difference, hint=hint)
    return _("{name} is wrong (largest difference {difference})").format(name=name, difference=difference)


def test_gru_step_forward_fixed_vector(gru_lstm):
    next_h, _cache = gru_lstm.gru_step_forward(*fresh(X, PREV_H, GRU_WX, GRU_WH, GRU_B))
    check("next_h", next_h, GRU_NEXT_H,
          _("u = block 0 and r = block 1 are sigmoids, c~ = tanh(x Wx_c + (r * prev_h) Wh_c + b_c), "
            "next_h = u * c~ + (1 - u) * prev_h (u weights the NEW candidate here, unlike PyTorch)"))


def test_gru_step_backward_fixed_vector(gru_lstm):
    _next_h, cache = gru_lstm.gru_step_forward(*fresh(X, PREV_H, GRU_WX, GRU_WH, GRU_B))
    dx, dprev_h, dWx, dWh, db = gru_lstm.gru_step_backward(*fresh(DNEXT_H), cache)
    check("dx", dx, GRU_DX, _("dx = da Wx^T with da = [da_u, da_r, da_c], da_c = dnext_h * u * (1 - c~**2) and "
                              "da_u = dnext_h * (c~ - prev_h) * u * (1 - u)"))
    check("dprev_h", dprev_h, GRU_DPREV_H, _("prev_h reaches next_h by four paths: (1 - u), r * prev_h, u and r"))
    check("dWx", dWx, GRU_DWX)
    check("dWh", dWh, GRU_DWH, _("the candidate block of dWh is (r * prev_h)^T da_c"))
    check("db", db, GRU_DB)


def test_lstm_step_forward_fixed_vector(gru_lstm):
    next_h, next_c, _cache = gru_lstm.lstm_step_forward(*fresh(X, PREV_H, PREV_C, LSTM_WX, LSTM_WH, LSTM_B))
    check("next_c", next_c, LSTM_NEXT_C, _("next_c = f * prev_c + i * g with blocks in the order i, f, o, g"))
    check("next_h", next_h, LSTM_NEXT_H, _("next_h = o * tanh(next_c)"))


def test_lstm_step_backward_fixed_vector(gru_lstm):
    _next_h, _next_c, cache = gru_lstm.lstm_step_forward(*fresh(X, PREV_H, PREV_C, LSTM_WX, LSTM_WH, LSTM_B))
    dx, dprev_h, dprev_c, dWx, dWh, db = gru_lstm.lstm_step_backward(*fresh(DNEXT_H, DNEXT_C), cache)
    check("dprev_c", dprev_c, LSTM_DPREV_C, _("dprev_c = dc * f, where dc = dnext_c + dnext_h * o * "
                                              "(1 - tanh(next_c)**2)"))
    check("dx", dx, LSTM_DX, _("dx = da Wx^T with da stacked as i, f, o, g; the forget gate's part is "
                               "dc * prev_c * f * (1 - f)"))
    check("dprev_h", dprev_h, LSTM_DPREV_H)
    check("dWx", dWx, LSTM_DWX)
    check("dWh", dWh, LSTM_DWH)
    check("db", db, LSTM_DB)


def test_lstm_forward_backward_fixed_sequence(gru_lstm):
    h, cache = gru_lstm.lstm_forward(*fresh(SEQ_X, SEQ_H0, LSTM_WX, LSTM_WH, LSTM_B))
    check("h", h, SEQ_H, _("h has shape (N, T, H), excludes h0, and the cell starts at c0 = 0"))
    dx, dh0, dWx, dWh, db = gru_lstm.lstm_backward(*fresh(SEQ_DH), cache)
    check("dx", dx, SEQ_DX)
    check("dh0", dh0, SEQ_DH0, _("carry both dprev_h and dprev_c from step t+1 back to step t"))
    check("dWx", dWx, SEQ_DWX)
    check("dWh", dWh, SEQ_DWH)
    check("db", db, SEQ_DB, _("weight gradients are sums over all time steps"))
