#!/usr/bin/python3
"""Independent reference for the interior point tests: solves a conic QP written by
interior_point_test.cpp with CVXOPT's coneqp (Debian python3-cvxopt).

Input file (whitespace separated numbers):
  n cones equality_rows
  dims[cones]                 cone dimensions (1 = R+, 2 or 3 = second-order cone)
  scale[n]                    s = diag(scale) x must lie in the product of cones
  Q[n*n] (row-major)          minimize 1/2 x^T Q x + r^T x
  r[n]
  A[equality_rows*n], b[equality_rows]   A x = b
Output file: the status word, then x (n numbers, 17 significant digits).
Exit code 3 when cvxopt is not installed.
"""
import sys

try:
    import numpy as np
    from cvxopt import matrix, solvers
except ImportError:
    sys.exit(3)


def main(source, target):
    tokens = open(source).read().split()
    position = 0

    def take(count, kind=float):
        nonlocal position
        values = [kind(t) for t in tokens[position:position + count]]
        position += count
        return values

    n, cones, rows = take(3, int)
    dims = take(cones, int)
    scale = np.array(take(n))
    q_matrix = np.array(take(n * n)).reshape(n, n)
    r = np.array(take(n))
    a = np.array(take(rows * n)).reshape(rows, n) if rows else None
    b = np.array(take(rows)) if rows else None

    # CVXOPT orders the cones: all R+ ('l') rows first, then each second-order cone ('q').
    offsets = np.concatenate([[0], np.cumsum(dims)]).astype(int)
    order = [k for k in range(cones) if dims[k] == 1] + [k for k in range(cones) if dims[k] > 1]
    g = np.zeros((n, n))
    row = 0
    for k in order:
        for j in range(offsets[k], offsets[k + 1]):
            g[row, j] = -scale[j]  # G x + s = 0, s in K  <=>  diag(scale) x in K
            row += 1
    cone_dims = {'l': sum(1 for d in dims if d == 1), 'q': [d for d in dims if d > 1], 's': []}
    # The tightest tolerances at which CVXOPT still ends 'optimal' on the test problems (at
    # 1e-10 and below its primal residual stalls in rounding and it reports 'unknown'); its
    # natural-map residual is then ~1e-7 relative where cones have sliding pairs.
    solvers.options.update({'show_progress': False, 'abstol': 1e-9, 'reltol': 1e-9,
                            'feastol': 1e-9, 'maxiters': 200})
    args = [matrix(q_matrix), matrix(r), matrix(g), matrix(np.zeros(n)), cone_dims]
    if rows:
        args += [matrix(a), matrix(b)]
    solution = solvers.coneqp(*args)
    with open(target, 'w') as out:
        out.write(solution['status'] + '\n')
        for value in np.array(solution['x']).ravel():
            out.write('%.17g\n' % value)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
