/* Nearest value to q in v (first on ties); twin of bench/kernels/closest.py. */
#include <math.h>
#include <stdint.h>

int64_t closest(const double *v, int64_t n, double q, double *dist) {
    int64_t best = 0;
    double best_d = fabs(v[0] - q);
    for (int64_t i = 1; i < n; i++) {
        double d = fabs(v[i] - q);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    *dist = best_d;
    return best;
}
