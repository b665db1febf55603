/* 5-body simulation on flat arrays, returns the final energy; twin of bench/kernels/nbody.py. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static double energy(const double *pos, const double *vel, const double *mass, int64_t n) {
    double e = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double vx = vel[3 * i], vy = vel[3 * i + 1], vz = vel[3 * i + 2];
        e += 0.5 * mass[i] * (vx * vx + vy * vy + vz * vz);
        for (int64_t j = i + 1; j < n; j++) {
            double dx = pos[3 * i] - pos[3 * j];
            double dy = pos[3 * i + 1] - pos[3 * j + 1];
            double dz = pos[3 * i + 2] - pos[3 * j + 2];
            e -= mass[i] * mass[j] / sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    return e;
}

double nbody(const double *pos0, const double *vel0, const double *mass, int64_t n,
             int64_t steps, double dt) {
    double *pos = malloc(3 * n * sizeof(double));
    double *vel = malloc(3 * n * sizeof(double));
    for (int64_t k = 0; k < 3 * n; k++) {
        pos[k] = pos0[k];
        vel[k] = vel0[k];
    }
    for (int64_t step = 0; step < steps; step++) {
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = i + 1; j < n; j++) {
                double dx = pos[3 * i] - pos[3 * j];
                double dy = pos[3 * i + 1] - pos[3 * j + 1];
                double dz = pos[3 * i + 2] - pos[3 * j + 2];
                double d2 = dx * dx + dy * dy + dz * dz;
                double mag = dt / (d2 * sqrt(d2));
                double mj = mass[j] * mag;
                vel[3 * i] -= dx * mj;
                vel[3 * i + 1] -= dy * mj;
                vel[3 * i + 2] -= dz * mj;
                double mi = mass[i] * mag;
                vel[3 * j] += dx * mi;
                vel[3 * j + 1] += dy * mi;
                vel[3 * j + 2] += dz * mi;
            }
        }
        for (int64_t i = 0; i < n; i++) {
            pos[3 * i] += dt * vel[3 * i];
            pos[3 * i + 1] += dt * vel[3 * i + 1];
            pos[3 * i + 2] += dt * vel[3 * i + 2];
        }
    }
    double e = energy(pos, vel, mass, n);
    free(pos);
    free(vel);
    return e;
}
