#!/usr/bin/python3
"""FCLIB natural-map merit of a written solution, computed from the HDF5 file alone.

Independent of the engine (own reader, own reduction, own cone projection): it judges the r
that `moreau fclib solve FILE --output OUT` wrote to OUT:/solution/r against the problem
stored in OUT (the input problem, copied). The merit is the one of Acary, Bremond & Huber
(2018), || r - P_K(r - (u + mu ||u_T|| e_N)) ||_2 / ||q||_2 with u = W r + q; a global problem
(M v = H r + f, u = H^T v + w) is reduced with M exactly as stored (fclib.h has no
"one triangle stored" flag): W = H^T M^-1 H, q = H^T M^-1 f + w, G eliminated when present.

usage: fclib_independent_merit.py SOLVED.hdf5 TOLERANCE
prints the merit; exit status 1 when it exceeds TOLERANCE (or is not finite), 2 on bad input.
"""
import sys

import h5py
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def read_matrix(group):
    m, n, nz = int(group["m"][0]), int(group["n"][0]), int(group["nz"][0])
    p, i, x = group["p"][()], group["i"][()], group["x"][()]
    if nz >= 0:  # triplets: i rows, p columns (CSparse); repeated entries add up
        return sp.coo_matrix((x[:nz], (i[:nz], p[:nz])), shape=(m, n)).tocsc()
    if nz == -1:
        return sp.csc_matrix((x[: p[-1]], i[: p[-1]], p), shape=(m, n))
    if nz == -2:
        return sp.csr_matrix((x[: p[-1]], i[: p[-1]], p), shape=(m, n)).tocsc()
    raise ValueError(f"nz = {nz} is not a storage code")


def project_cone(x, mu):
    normal, tangent = x[0], x[1:]
    t = np.linalg.norm(tangent)
    if t <= mu * normal:
        return x
    if mu * t <= -normal:
        return np.zeros_like(x)
    s = (normal + mu * t) / (1.0 + mu * mu)
    return np.concatenate(([s], mu * s * tangent / t))


def local_problem(h5):
    if "fclib_local" in h5:
        g = h5["fclib_local"]
        return read_matrix(g["W"]), g["vectors/q"][()], g["vectors/mu"][()], int(g["spacedim"][0])
    g = h5["fclib_global"]
    M, H = read_matrix(g["M"]), read_matrix(g["H"])
    f, w = g["vectors/f"][()], g["vectors/w"][()]
    lu = spla.splu(M.tocsc())
    Minv_H = lu.solve(H.toarray())
    Minv_f = lu.solve(f)
    W = H.T @ Minv_H
    q = H.T @ Minv_f + w
    if "G" in g and int(g["G"]["n"][0]) > 0:
        G = read_matrix(g["G"]).toarray()
        b = g["vectors/b"][()] if "b" in g["vectors"] else np.zeros(G.shape[1])
        Minv_G = lu.solve(G)
        S = G.T @ Minv_G
        B = G.T @ Minv_H
        W = W - B.T @ np.linalg.solve(S, B)
        q = q - B.T @ np.linalg.solve(S, G.T @ Minv_f + b)
    return sp.csr_matrix(W), q, g["vectors/mu"][()], int(g["spacedim"][0])


def natural_map_merit(W, q, mu, dim, r):
    u = W @ r + q
    total = 0.0
    for c, mu_c in enumerate(mu):
        block = slice(dim * c, dim * c + dim)
        u_c = u[block].copy()
        u_c[0] += mu_c * np.linalg.norm(u_c[1:])
        e = r[block] - project_cone(r[block] - u_c, mu_c)
        total += e @ e
    return np.sqrt(total) / max(np.linalg.norm(q), 1e-12)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tolerance = float(sys.argv[2])
    with h5py.File(sys.argv[1], "r") as h5:
        W, q, mu, dim = local_problem(h5)
        if "solution" not in h5 or "r" not in h5["solution"]:
            print(f"{sys.argv[1]}: no /solution/r", file=sys.stderr)
            return 2
        r = h5["solution/r"][()]
    if r.shape != q.shape:
        print(f"{sys.argv[1]}: /solution/r has {r.size} entries, q has {q.size}", file=sys.stderr)
        return 2
    merit = natural_map_merit(W, q, mu, dim, r)
    print(f"{merit:.3e}")
    return 0 if np.isfinite(merit) and merit <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
