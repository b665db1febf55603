/* Longest Collatz chain for a start below limit; twin of bench/kernels/collatz.py. */
#include <stdint.h>

int64_t collatz(int64_t limit, int64_t *best_len_out) {
    int64_t best = 1, best_len = 1;
    for (int64_t start = 1; start < limit; start++) {
        int64_t n = start, length = 1;
        while (n != 1) {
            if (n % 2 == 0)
                n = n / 2;
            else
                n = 3 * n + 1;
            length++;
        }
        if (length > best_len) {
            best_len = length;
            best = start;
        }
    }
    *best_len_out = best_len;
    return best;
}
