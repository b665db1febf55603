/* Monte-Carlo pi from an LCG mod 2**32; twin of bench/kernels/mc_pi.py. */
#include <stdint.h>

int64_t mc_pi(int64_t samples, int64_t seed, double *pi) {
    uint64_t state = (uint64_t)seed;
    int64_t inside = 0;
    for (int64_t i = 0; i < samples; i++) {
        state = (1664525u * state + 1013904223u) % 4294967296u;
        double x = (double)state / 4294967296.0;
        state = (1664525u * state + 1013904223u) % 4294967296u;
        double y = (double)state / 4294967296.0;
        if (x * x + y * y <= 1.0)
            inside++;
    }
    *pi = 4.0 * (double)inside / (double)samples;
    return inside;
}
