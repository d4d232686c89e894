"""A multiprocessing.Pool whose workers multiply matrices with numpy (on
Debian, OpenBLAS through libblas.so.3), while the parent only waits for
their results. Each worker's BLAS starts a thread pool of its own (one
thread per CPU unless OPENBLAS_NUM_THREADS says otherwise), so a pool of 2
workers on 2 cores runs 4 computing threads.
Usage: python3 pool_matmul.py [workers] [seconds] [n]  (default 2, 1 s, 256)
Run it with Debian's /usr/bin/python3 (python3-numpy)."""
import multiprocessing
import sys
import time

import numpy


def work(args):
    seconds, n = args
    a = numpy.arange(n * n, dtype=numpy.float64).reshape(n, n) % 7 * 0.25
    b = numpy.arange(n * n, dtype=numpy.float64).reshape(n, n) % 5 * 0.5
    end = time.monotonic() + seconds
    products = 0
    while time.monotonic() < end:
        c = a @ b
        products += 1
    return products, float(c[0, 1])


if __name__ == "__main__":
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    multiprocessing.set_start_method("fork")
    with multiprocessing.Pool(workers) as pool:
        for products, value in pool.map(work, [(seconds, n)] * workers):
            print(f"{products} products of {n}x{n} (c[0, 1] = {value})")
