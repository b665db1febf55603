/* Sum of sqrt(i) for i in [0, n); twin of bench/kernels/sum_sqrt.py. */
#include <math.h>
#include <stdint.h>

double sum_sqrt(int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += sqrt((double)i);
    return s;
}
