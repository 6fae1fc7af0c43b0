// Writes one of the benchmark trial shapes (trial_fixture.hpp) into a folder, for measuring the
// command-line tool and `cat` on the same files:
//   bench_make_trial a|b|c|s|w DIR [--running]   (--running: no end-of-training marker; s: (a) cut to 200 steps;
//   w: 64 workers x 200 steps)
#include <cstdio>
#include <cstring>
#include <string>

#include "trial_fixture.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_make_trial a|b|c|s|w DIR [--running]\n");
        return 2;
    }
    const auto* shape = bench::find_shape(argv[1]);
    if (!shape) {
        std::fprintf(stderr, "bench_make_trial: unknown shape '%s' (a, b, c, s, w, m, x or y)\n", argv[1]);
        return 2;
    }
    const bool running = argc > 3 && std::strcmp(argv[3], "--running") == 0;
    bench::write_trial(argv[2], *shape, !running);
    std::printf("shape %s: %d workers x %d steps x %d tensors x %zu float32 -> %s\n", shape->name, shape->workers,
                shape->steps, shape->tensors, shape->elements, argv[2]);
    return 0;
}
