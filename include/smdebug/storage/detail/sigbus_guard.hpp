#pragma once
// Copying out of a file mapping without dying when the file shrinks under it. Touching a page of a
// mapping that lies wholly past the end of its file raises SIGBUS; a process-wide handler (installed
// once, on first use) turns a SIGBUS inside a guarded copy on this thread into a `false` from
// guarded_copy, by a siglongjmp back into it. Any other SIGBUS (not during a guarded copy, or at an
// address outside the range being copied) goes to the handler that was installed before ours, or
// to the default action (the process ends, as it would have without us).
//
// Only memcpy runs between arming and disarming: no destructor is skipped by the jump. The handler
// is installed with SA_NODEFER, so SIGBUS is not left blocked after the jump and sigsetjmp need not
// save the signal mask (no system call per copy).
#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <mutex>

#include <signal.h>

namespace smdebug::detail {

namespace sigbus_detail {

struct Armed {
    sigjmp_buf* jump = nullptr;
    const std::byte* begin = nullptr;
    const std::byte* end = nullptr;
};
inline thread_local Armed armed;
inline struct sigaction previous {};

inline void handler(int sig, siginfo_t* info, void* context) {
    Armed& a = armed;
    const auto* addr = static_cast<const std::byte*>(info ? info->si_addr : nullptr);
    if (a.jump && addr >= a.begin && addr < a.end) {
        sigjmp_buf* jump = a.jump;
        a.jump = nullptr;
        siglongjmp(*jump, 1);
    }
    // Not ours: what would have happened without us.
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) {
            previous.sa_sigaction(sig, info, context);
            return;
        }
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    // The default action: returning re-runs the faulting access, which now ends the process.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGBUS, &dfl, nullptr);
    if (info && info->si_code <= 0) ::raise(SIGBUS);  // sent by kill(): no access to re-run
}

inline bool install() {
    static std::once_flag once;
    static bool ok = false;
    std::call_once(once, [] {
        struct sigaction sa {};
        sa.sa_sigaction = handler;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        ok = ::sigaction(SIGBUS, &sa, &previous) == 0;
    });
    return ok;
}

[[gnu::noinline]] inline bool copy(std::byte* out, const std::byte* from, std::size_t n) {
    Armed& a = armed;  // touch the thread's slot before any fault (the handler only reads it)
    sigjmp_buf jump;
    if (sigsetjmp(jump, 0) != 0) return false;  // the handler disarmed
    a.begin = from;
    a.end = from + n;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    a.jump = &jump;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::memcpy(out, from, n);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    a.jump = nullptr;
    return true;
}

}  // namespace sigbus_detail

// Installs the SIGBUS handler (once per process); false when it cannot be installed.
inline bool sigbus_guard_available() { return sigbus_detail::install(); }

// Copies n bytes from a file mapping: false (nothing thrown, the process goes on) when a page of
// [from, from + n) is past the end of its file. Call sigbus_guard_available() first.
inline bool guarded_copy(std::byte* out, const std::byte* from, std::size_t n) {
    return n == 0 || sigbus_detail::copy(out, from, n);
}

}  // namespace smdebug::detail
