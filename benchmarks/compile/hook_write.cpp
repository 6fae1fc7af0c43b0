// C++ training saving tensors through the Hook.
#include <vector>

#include <smdebug/local.hpp>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    smdebug::HookOptions options;
    options.include_collections = {"weights", "losses"};
    smdebug::Hook<smdebug::LocalStore> hook(argv[1], options);
    std::vector<float> w(256, 0.5f);
    for (int step = 0; step < 10; ++step) {
        hook.next_step();
        hook.save_tensor("Net_fc1.weight", w.data(), smdebug::Shape{16, 16});
        hook.save_scalar("lr", 0.1 * step);
    }
    hook.close();
}
