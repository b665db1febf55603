/* Mandelbrot escape counts into a row-major int64 array; twin of bench/kernels/mandelbrot.py. */
#include <stdint.h>

int64_t mandelbrot(int64_t *out, int64_t height, int64_t width, double x0, double y0,
                   double dx, double dy, int64_t max_iter) {
    int64_t total = 0;
    for (int64_t y = 0; y < height; y++) {
        double ci = y0 + (double)y * dy;
        for (int64_t x = 0; x < width; x++) {
            double cr = x0 + (double)x * dx;
            double zr = 0.0, zi = 0.0;
            int64_t n = 0;
            while (n < max_iter && zr * zr + zi * zi <= 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                n++;
            }
            out[y * width + x] = n;
            total += n;
        }
    }
    return total;
}
