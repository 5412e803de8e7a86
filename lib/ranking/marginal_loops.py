"""The per-prompt loops of the votes' quadrature fit (:mod:`lib.ranking.marginal`), compiled by numba.

Each prompt has its own nodes (adaptive quadrature, :meth:`lib.ranking.marginal.Marginal.adapt`): ``alpha``,
``xi``, ``log_w`` are (prompts, K) and the tie constant (prompts, 6, K). One pass runs over each win term and node a
few times in registers, where numpy's whole-array steps made a dozen
(terms x nodes) temporaries: a pass over 500,000 votes and 15 nodes took 0.2-0.4 s (numpy: 0.8-1.7 s; loaded
2-core machine). Compiled on first use and cached on disk beside this module (numba's ``cache=True``).

A win term is log sigmoid(alpha_k t) at node k (:class:`lib.ranking.marginal._Terms`). With z = alpha_k t,
l = log sigmoid(z) and l'' = -sigmoid(z) sigmoid(-z): dl/dt = alpha sigmoid(-z), dl/du = xi z sigmoid(-z),
d2l/dt2 = alpha^2 l'', d2l/dtdu = alpha xi (z l'' + sigmoid(-z)), d2l/du2 = xi^2 z^2 l'' + xi (xi + 1) z sigmoid(-z)
(u = log sigma_alpha, xi_k = sigma_alpha z_jk = log alpha_k at the prompt's node z_jk).
"""

from __future__ import annotations

import numba
import numpy as np

_VECTOR, _MATRIX, _INDEX, _COUNT = numba.float64[:], numba.float64[:, :], numba.int64[:], numba.int64
_TENSOR = numba.float64[:, :, :]


@numba.njit(cache=True, nogil=True)
def _node_sums(first, last, tie_count, tie, t, w, alpha, log_w, s) -> float:
    """A prompt's log-likelihood at each node, its log weight added, into ``s`` (K,); returns their log-sum-exp."""
    for k in range(alpha.size):
        s[k] = log_w[k] + tie_count * tie[0, k]
    for i in range(first, last):
        for k in range(alpha.size):
            z = alpha[k] * t[i]
            s[k] += w[i] * (min(z, 0.0) - np.log1p(np.exp(-abs(z))))
    top = s.max()
    return top + np.log(np.exp(s - top).sum())


@numba.njit(cache=True, nogil=True)
def _term_derivatives(first, last, order, p, t, alpha, xi, terms, sigmoids) -> None:
    """Each term's node-weighted dl/dt, dl/du (``terms[0:2]``) and, ``order`` >= 2, d2l/dt2, d2l/dtdu, d2l/du2
    (``terms[2:5]``), under the prompt's node weights ``p`` (K,); ``order`` 3: each term's sigmoid(-z) at each node
    into ``sigmoids`` (last - first, K), which :func:`_centred_rows` reads."""
    for i in range(first, last):
        g_t = g_u = h_tt = h_tu = h_uu = 0.0
        for k in range(alpha.size):
            z = alpha[k] * t[i]
            e = np.exp(-abs(z))
            lz = (e if z >= 0 else 1.0) / (1.0 + e)  # sigmoid(-z)
            if order >= 3:
                sigmoids[i - first, k] = lz
            g_t += p[k] * lz * alpha[k]
            g_u += p[k] * lz * z * xi[k]
            if order >= 2:
                lzz = -lz * (1.0 - lz)
                h_tt += p[k] * lzz * alpha[k] ** 2
                h_tu += p[k] * alpha[k] * xi[k] * (z * lzz + lz)
                h_uu += p[k] * (xi[k] ** 2 * z * z * lzz + xi[k] * (xi[k] + 1.0) * z * lz)
        terms[0, i], terms[1, i], terms[2, i], terms[3, i], terms[4, i] = g_t, g_u, h_tt, h_tu, h_uu


@numba.njit(cache=True, nogil=True)
def _centred_rows(
    j, first, last, tie_count, tie, p, t, w, sign, a, b, psi, alpha, xi, n, iy, iu, terms, sigmoids, c
) -> None:
    """Prompt ``j``'s gradient at each node less its mean over the nodes, times sqrt(p_k), into rows j K + k of
    ``c`` (J_c K, full): the skills' columns, then the globals' (``psi``: each term's globals' part of dt; ``iy``,
    ``iu``: y's and u's columns among them, -1 without; ``tie``: the tie constant's derivatives; ``sigmoids``: each
    term's sigmoid(-z) at each node, from :func:`_term_derivatives`)."""
    k_nodes = alpha.size
    mean_y = mean_u = 0.0
    for k in range(k_nodes):
        mean_y += p[k] * tie[1, k]
        mean_u += p[k] * tie[2, k]
    for k in range(k_nodes):
        root = np.sqrt(p[k])
        if iy >= 0:
            c[j * k_nodes + k, n + iy] += tie_count * (tie[1, k] - mean_y) * root
        if iu >= 0:
            c[j * k_nodes + k, n + iu] += tie_count * (tie[2, k] - mean_u) * root
    for i in range(first, last):
        for k in range(k_nodes):
            z = alpha[k] * t[i]
            lz = sigmoids[i - first, k]
            row, root = j * k_nodes + k, np.sqrt(p[k])
            centred = (lz * alpha[k] - terms[0, i]) * w[i] * root
            c[row, b[i]] += sign[i] * centred
            c[row, a[i]] -= sign[i] * centred
            for g in range(psi.shape[1]):
                c[row, n + g] += centred * psi[i, g]
            if iu >= 0:
                c[row, n + iu] += (lz * z * xi[k] - terms[1, i]) * w[i] * root


@numba.njit(
    numba.float64(
        *(_COUNT, _VECTOR, _VECTOR, _VECTOR, _INDEX, _INDEX, _MATRIX, _INDEX, _VECTOR, _TENSOR, _MATRIX, _MATRIX),
        *(_MATRIX, _COUNT, _COUNT, _COUNT, _MATRIX, _MATRIX, _MATRIX),
    ),
    cache=True,
    nogil=True,
)
def prompts(order, t, w, sign, a, b, psi, starts, ties, tie, alpha, xi, log_w, n, iy, iu, pi, terms, c) -> float:
    """One chunk's prompts (``starts``: (J_c + 1,) their first terms; ``t``, ``w``, ``sign``, ``a``, ``b``: each
    term's t, weight, sign and systems; ``ties``: each prompt's weighted number of ties; ``tie``: (J_c, 6, K) the
    tie constant and its derivatives, 0 without ties; ``alpha``, ``xi``, ``log_w``: (J_c, K) the nodes): returns the
    log-likelihood; ``order`` >= 1: each prompt's node weights into ``pi`` (J_c, K) and each term's derivatives
    into ``terms`` (5, T_c) (:func:`_term_derivatives`); 3: the centred gradients into ``c``
    (:func:`_centred_rows`)."""
    value = 0.0
    s = np.empty(alpha.shape[1])
    for j in range(starts.size - 1):
        first, last = starts[j], starts[j + 1]
        log_j = _node_sums(first, last, ties[j], tie[j], t, w, alpha[j], log_w[j], s)
        value += log_j
        if order == 0:
            continue
        pi[j] = np.exp(s - log_j)
        sigmoids = np.empty((last - first if order >= 3 else 0, alpha.shape[1]))
        _term_derivatives(first, last, order, pi[j], t, alpha[j], xi[j], terms, sigmoids)
        if order >= 3:
            rows = (j, first, last, ties[j], tie[j], pi[j], t, w, sign, a, b, psi, alpha[j], xi[j], n, iy, iu)
            _centred_rows(*rows, terms, sigmoids, c)
    return value


@numba.njit(cache=True, nogil=True)
def _conditional(first, last, tie_count, b, t, w, sigma, z) -> tuple[float, float, float]:
    """A prompt's log posterior of z (log alpha = sigma z, z ~ N(0, 1)) given the rest, up to a constant, and its
    first two derivatives in z: with zz = alpha t, d log sigmoid(zz) / d log alpha = zz sigmoid(-zz) and its
    derivative zz sigmoid(-zz) (1 - zz sigmoid(zz)); a tie's log(1 - exp(-beta)), beta = 2 alpha b: beta q1 and
    beta q1 + beta^2 q2 (:func:`lib.ranking.marginal._tie_constant`)."""
    alpha = np.exp(sigma * z)
    value, g, h = -0.5 * z * z, -z, -1.0
    for i in range(first, last):
        zz = alpha * t[i]
        e = np.exp(-abs(zz))
        lz = (e if zz >= 0 else 1.0) / (1.0 + e)  # sigmoid(-zz)
        value += w[i] * (min(zz, 0.0) - np.log1p(e))
        g += w[i] * sigma * zz * lz
        h += w[i] * sigma * sigma * zz * lz * (1.0 - zz * (1.0 - lz))
    if tie_count > 0:
        beta = 2 * alpha * b
        q1 = 1 / np.expm1(beta)
        q2 = -q1 * (1 + q1)
        value += tie_count * np.log(-np.expm1(-beta))
        g += tie_count * sigma * q1 * beta
        h += tie_count * sigma * sigma * (q1 * beta + q2 * beta * beta)
    return value, g, h


ROUNDING = 1e-12
"""A step of :func:`modes` whose value is lower by at most this fraction is taken: within a few 1e-8 of the mode a
Newton step gains less than the value's rounding, and refusing it (halving it 60 times, again at each of 100 steps)
left 1 prompt in 12 of an arena's first placement 1e-8 from its mode after some 3,800 evaluations of its votes (the
step taken: 3 evaluations, at the mode to 1e-16)."""


@numba.njit(
    numba.void(_VECTOR, _VECTOR, _INDEX, _VECTOR, numba.float64, numba.float64, _VECTOR, _VECTOR, numba.float64),
    cache=True,
    nogil=True,
)
def modes(t, w, starts, ties, b, sigma, centre, scale, largest) -> None:
    """Each prompt's conditional mode of z given the rest (``starts``, ``t``, ``w``, ``ties`` as :func:`prompts`;
    ``b``, ``sigma``: the cutpoint and sigma_alpha), from ``centre`` (J_c,), by Newton steps of at most 1 halved
    until the value rises, into ``centre``; 1 / sqrt(-d2/dz2) there into ``scale`` (at most ``largest``)."""
    for j in range(starts.size - 1):
        first, last = starts[j], starts[j + 1]
        z = centre[j]
        value, g, h = _conditional(first, last, ties[j], b, t, w, sigma, z)
        for _ in range(100):
            step = -g / h if h < 0 else np.sign(g)
            step = min(1.0, max(-1.0, step))
            if abs(step) < 1e-10:
                break
            for _ in range(60):
                new_value, new_g, new_h = _conditional(first, last, ties[j], b, t, w, sigma, z + step)
                if new_value >= value - ROUNDING * abs(value):
                    break
                step /= 2
            z += step
            value, g, h = new_value, new_g, new_h
        centre[j] = z
        scale[j] = min(largest, 1 / np.sqrt(-h)) if h < 0 else largest
