/* Naive i-j-k matrix multiply of row-major arrays, returns the sum of c; twin of matmul.py. */
#include <stdint.h>

double matmul(const double *a, const double *b, double *c, int64_t n, int64_t m, int64_t p) {
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < p; j++) {
            double s = 0.0;
            for (int64_t k = 0; k < m; k++)
                s += a[i * m + k] * b[k * p + j];
            c[i * p + j] = s;
            total += s;
        }
    }
    return total;
}
