// A library the spin helper loads with dlopen after it started (`spin_helper BEFORE AFTER
// PLUGIN`), for `record --spin`'s search of libraries mapped later: it has a slow path of the
// same name as the helper's own, lock_slow_path, called kPluginCalls times from
// spin_plugin_run(). Hidden, so the library's calls stay its own.
namespace {
constexpr int kPluginCalls = 200;
volatile int plugin_lock = 0;
volatile int sink = 0;
}  // namespace

extern "C" __attribute__((noinline, used, visibility("hidden"))) void lock_slow_path(
    volatile int* lock) {
    for (int i = 0; i < 2000; ++i) sink = sink + 1;
    *lock = 0;
}

// Where the library's lock_slow_path is, for the helper to see when it carries a probe.
extern "C" __attribute__((visibility("default"))) const void* spin_plugin_slow_path() {
    return reinterpret_cast<const void*>(&lock_slow_path);
}

extern "C" __attribute__((visibility("default"))) int spin_plugin_run() {
    for (int i = 0; i < kPluginCalls; ++i) lock_slow_path(&plugin_lock);
    return kPluginCalls;
}
