// The writing process of the crash test: a Hook saving three tensors per step, as fast as it can,
// into OUT_DIR, until it is killed (or MAX_STEPS steps are durable). After the call that makes a
// step durable returns, it prints "durable <step>" on stdout (one write(2) per line, unbuffered):
// the driver holds the library to every step reported this way.
// With STEP_DELAY_MS it sleeps that long after each durable step: a slow job, for the live view
// of `smdebug serve` (tests/serve/browser_check.js) to follow.
//
//   crash_writer OUT_DIR [MAX_STEPS [STEP_DELAY_MS]]
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <string>
#include <thread>

#include <unistd.h>

#include <smdebug/storage/local_store.hpp>
#include <smdebug/writer/hook.hpp>

#include "crash_common.hpp"

namespace {

using WriterHook = smdebug::Hook<smdebug::LocalStore>;

// The calls the crash test treats as "the Hook reported the step saved": next_step() closes the
// step and hands it to the background writer; flush() returns once every closed step is durable
// (event file fsync'ed and renamed before its index file).
void make_current_step_durable(WriterHook& hook) {
    hook.next_step();
    hook.flush();
}

void report_durable(std::int64_t step) {
    char line[64];
    const int n = std::snprintf(line, sizeof line, "durable %lld\n", static_cast<long long>(step));
    if (::write(1, line, static_cast<std::size_t>(n)) != n) std::_Exit(3);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: crash_writer OUT_DIR [MAX_STEPS [STEP_DELAY_MS]]\n");
        return 2;
    }
    const long long max_steps = argc > 2 ? std::atoll(argv[2]) : -1;
    const long long step_delay_ms = argc > 3 ? std::atoll(argv[3]) : 0;
    smdebug::HookOptions o;
    o.save_config = smdebug::SaveConfig(smdebug::save_config_mode(1));
    o.save_all = true;
    o.write_end_marker = true;
    WriterHook hook(smdebug::LocalStore(argv[1]), o);  // fsync durability (the default)
    hook.next_step();
    for (std::int64_t step = 0; max_steps < 0 || step < max_steps; ++step) {
        hook.save_tensor("weight", crash::weights(step));
        hook.save_tensor("bias", crash::bias(step));
        hook.save_tensor("counter", crash::counter(step));
        make_current_step_durable(hook);
        report_durable(step);
        if (step_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(step_delay_ms));
    }
    hook.close();
    return 0;
}
