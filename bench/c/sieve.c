/* Sieve of Eratosthenes over a uint8 array, counts primes below n; twin of sieve.py. */
#include <stdint.h>

int64_t sieve(uint8_t *flags, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        flags[k] = 1;
    flags[0] = 0;
    flags[1] = 0;
    for (int64_t i = 2; i * i < n; i++) {
        if (flags[i]) {
            for (int64_t j = i * i; j < n; j += i)
                flags[j] = 0;
        }
    }
    int64_t count = 0;
    for (int64_t k = 0; k < n; k++)
        if (flags[k])
            count++;
    return count;
}
