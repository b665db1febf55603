/* Spectral norm by 10 power iterations of A^T A; twin of bench/kernels/spectral_norm.py. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static double eval_a(int64_t i, int64_t j) {
    return 1.0 / (double)((i + j) * (i + j + 1) / 2 + i + 1);
}

static void mul_av(const double *u, double *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < n; j++)
            s += eval_a(i, j) * u[j];
        out[i] = s;
    }
}

static void mul_atv(const double *u, double *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < n; j++)
            s += eval_a(j, i) * u[j];
        out[i] = s;
    }
}

static void mul_atav(const double *u, double *out, double *tmp, int64_t n) {
    mul_av(u, tmp, n);
    mul_atv(tmp, out, n);
}

double spectral_norm(int64_t n, int64_t iterations) {
    double *u = malloc(n * sizeof(double));
    double *v = malloc(n * sizeof(double));
    double *tmp = malloc(n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        u[i] = 1.0;
        v[i] = 0.0;
        tmp[i] = 0.0;
    }
    for (int64_t it = 0; it < iterations; it++) {
        mul_atav(u, v, tmp, n);
        mul_atav(v, u, tmp, n);
    }
    double vbv = 0.0, vv = 0.0;
    for (int64_t i = 0; i < n; i++) {
        vbv += u[i] * v[i];
        vv += v[i] * v[i];
    }
    free(u);
    free(v);
    free(tmp);
    return sqrt(vbv / vv);
}
