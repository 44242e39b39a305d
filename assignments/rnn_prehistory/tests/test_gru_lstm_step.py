"""Public tests for gru_lstm.py: small fixed inputs with expected values, and shapes.

Run them with `pytest assignments/rnn_prehistory/tests/test_gru_lstm_step.py`. The expected
values were computed with PyTorch autograd (float64) from the equations in the docstrings.
The hidden tests check the same functions on random inputs and every gradient with finite
differences, and tell you when your GRU or LSTM follows another library's convention (PyTorch, d2l) instead of this exercise's.
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

# Expected values: the GRU step as its docstring writes it (PyTorch's GRUCell is another GRU),
# torch.nn.LSTMCell and torch.nn.LSTM for the LSTM; the gradients are those of
# sum(DNEXT_H * next_h) (+ sum(DNEXT_C * next_c) for the LSTM step; sum(SEQ_DH * h) for the sequence).
# BEGIN EXPECTED VALUES: PyTorch's (float64), as computed; generated, do not edit
GRU_NEXT_H = np.array([[0.011072724621689123, 0.16562225266142738],
                       [0.33974512333164475, 0.5571048139406679]])
GRU_DX = np.array([[0.2626607466139253, 0.002897019508515144, -0.256866707596895],
                   [-0.13719381294398625, 0.019976063389124922, 0.17714593972223608]])
GRU_DPREV_H = np.array([[-0.4368574709403158, -0.3824468700290869],
                        [0.19417350920720575, 0.67952315896642]])
GRU_DWX = np.array([[0.06249942716034708, 0.018030431881411835, -0.0004938020593317927, 0.004611150776868086, 0.21683722193832855, 0.12458425990411096],
                    [0.03727460900096396, 0.01776413409426938, 0.0003800264267210116, 0.010936537416010573, 0.14186195467889018, 0.15325529972083948],
                    [0.012049790841580846, 0.017497836307126927, 0.001253854912773816, 0.01726192405515306, 0.06688668741945178, 0.181926339537568]])
GRU_DWH = np.array([[0.048548152431590975, 0.015953078953715394, -0.00019620502883581462, 0.005855852534755655, 0.0944755341081483, 0.06495513651180451],
                    [0.014915061552413492, 0.015598015237525454, 0.0009688996192345912, 0.014289701386945639, 0.042513392916018695, 0.09390634680379673]])
GRU_DB = np.array([-0.12612409079691556, -0.0013314889357122668, 0.004369142430264022, 0.03162693319571244, -0.37487633629719186, 0.14335519908364275])
LSTM_NEXT_H = np.array([[-0.07358319500072799, 0.045758075954016],
                        [0.14544034432153266, 0.2915556701393179]])
LSTM_NEXT_C = np.array([[-0.12965409260390875, 0.0783862996755503],
                        [0.25933954353347566, 0.5121704639023071]])
LSTM_DX = np.array([[2.847884326550622e-06, -0.0038476300105732024, -0.007698107905472954],
                    [-0.03680892167114555, 0.00751542766668838, 0.0518397770045223]])
LSTM_DPREV_H = np.array([[-0.0015098602103605302, -0.005642706484219598],
                         [-0.02209246699970564, 0.025482334622902766]])
LSTM_DPREV_C = np.array([[-0.033177958844141583, -0.015089661871860503],
                         [0.005837329861497082, -0.010189571850806987]])
LSTM_DWX = np.array([[0.00266947971386591, 0.0005039927019053812, -0.003607209324495378, -0.0010994520704400135, -0.00849834696162842, 0.024796559373776665, 0.01135722603839748, 0.0037923009770076056],
                     [0.0018404315415299043, -0.0007359117892440432, -0.0017429748238022038, -0.0011278001453147576, 0.0019563687298775508, 0.04579470471847555, 0.006613569284538661, 0.0005886390120157141],
                     [0.0010113833691938984, -0.0019758162803934676, 0.00012125967689097049, -0.0011561482201895017, 0.012411084421383523, 0.06679285006317444, 0.001869912530679843, -0.002615022952976178]])
LSTM_DWH = np.array([[0.002142579697787474, 0.00010357559859660984, -0.002688565371581121, -0.0009851651945229963, -0.0046499984960291585, 0.027874204261328944, 0.008777629602503643, 0.0024810281003979015],
                     [0.0010371821346727996, -0.0015496303896026227, -0.00020291937065688856, -0.0010229626276893218, 0.009289622425978803, 0.05587173138759413, 0.0024527539306918858, -0.001790521186257954]])
LSTM_DB = np.array([-0.004145240861680029, -0.006199522455747123, 0.009321172503465872, -0.00014174037437372062, 0.052273578457529855, 0.10499072672349445, -0.02371828376929409, -0.01601830982495946])
SEQ_H = np.array([[[0.060123880722944216, 0.07070780298751922],
                   [0.09673913780325794, 0.12670860806558368],
                   [0.12599739835452237, 0.17513794030153015]],
                  [[0.0956510564571291, 0.13753688571063732],
                   [0.13878796657094902, 0.20644382682329152],
                   [0.16222992710880715, 0.25057484290875015]]])
SEQ_DX = np.array([[[0.10411435439010452, -0.03926023722207489, -0.1826348288342543],
                    [0.04495284720409114, -0.011180559264834944, -0.06731396573376103],
                    [-0.0025064483126698896, 0.0014217009752279966, 0.005349850263125885]],
                   [[-0.10514418130296874, 0.023130960080905903, 0.15140610146478053],
                    [-0.16151749152378236, 0.02389796293318586, 0.20931341739015408],
                    [-0.16725050968216987, 0.015929836527579514, 0.1991101827373289]]])
SEQ_DH0 = np.array([[0.05541514042442671, -0.09847358790597918],
                    [-0.062453313629772376, 0.07522867145558639]])
SEQ_DWX = np.array([[0.05809360483502268, 0.08954750781134588, 0.020948541957194384, 0.035610278689766094, 0.05284107048481067, 0.08620144541626867, 0.22069869291689037, 0.21701513510464746],
                    [0.06335532663782864, 0.10412711601741938, 0.023378216830015446, 0.040983321439552904, 0.05647140179826962, 0.09735979735774908, 0.2209145845715828, 0.23551088148929167],
                    [0.06861704844063461, 0.11870672422349286, 0.025807891702836507, 0.046356364189339715, 0.06010173311172857, 0.1085181492992295, 0.2211304762262752, 0.2540066278739359]])
SEQ_DWH = np.array([[0.016973409376146237, 0.03153472439857693, 0.004535573764655968, 0.00913128138388876, 0.012746370739725543, 0.025116487506285232, 0.06643216586074223, 0.08061246047737868],
                    [0.022061147287942458, 0.048966085259558596, 0.006787448616541887, 0.013419656965029786, 0.01550102443860969, 0.0356078564666274, 0.05706833942949222, 0.09702472293478218]])
SEQ_DB = np.array([0.07454105887308451, 0.206544449586041, 0.03442039403163173, 0.07611810562197979, 0.05142969360733515, 0.15807665250430583, 0.0030584651081428382, 0.2620230737824599])
# END EXPECTED VALUES


def fresh(*arrays):
    """Copies of the inputs, so that a function that modifies its arguments cannot spoil other tests."""
    return [a.copy() for a in arrays]


def check(name, actual, expected, hint=""):
    """Shape first, then values (another summation order, or a fused multiply-add, moves a result by
    ~1e-15 of its terms' scale, which is about 1 here: rtol 1e-9 and atol 1e-12 are generous)."""
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
