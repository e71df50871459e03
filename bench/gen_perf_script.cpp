// Writes synthetic `perf script` text (perf record -g layout) for bench-flamegraph.sh:
// SAMPLES samples spread evenly over STACKS unique call stacks. Each stack is
// _start;__libc_start_call_main;main + 5 frames chosen from 10 functions per level (10^5 =
// 100,000 combinations) + a kernel tail on every 10th stack, so folding does realistic work.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    const std::uint64_t samples = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const std::uint64_t stacks = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
    if (stacks == 0 || stacks > 100000) {
        std::fprintf(stderr, "gen_perf_script: STACKS must be 1..100000\n");
        return 2;
    }
    std::string out;
    out.reserve(1 << 22);
    char line[256];
    for (std::uint64_t i = 0; i < samples; ++i) {
        // A multiplicative walk visits every stack equally often, in a scattered order.
        const std::uint64_t id = (i * 7919) % stacks;
        std::snprintf(line, sizeof line, "lockbench  4242  %llu.%06llu:     250000 cpu-clock: \n",
                      static_cast<unsigned long long>(1000 + i / 1000000),
                      static_cast<unsigned long long>(i % 1000000));
        out += line;
        if (id % 10 == 0) {
            out += "\tffffffff8225a6c1 do_syscall_64+0x71 ([kernel.kallsyms])\n";
            out += "\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])\n";
        }
        static constexpr std::uint64_t kPlace[5] = {10000, 1000, 100, 10, 1};
        for (int level = 5; level-- > 0;) {  // leaf (level 4) first, as perf prints
            const auto digit = (id / kPlace[level]) % 10;
            std::snprintf(line, sizeof line,
                          "\t%16llx lock_level%d_fn%llu+0x%x (/usr/bin/lockbench)\n",
                          static_cast<unsigned long long>(0x401000 + level * 0x100 + digit * 0x10),
                          level, static_cast<unsigned long long>(digit), 0x10 + level);
            out += line;
        }
        out +=
            "\t          401160 main+0x10 (/usr/bin/lockbench)\n"
            "\t    7f50e1f1fd8f __libc_start_call_main+0x7f (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
            "\t          401050 _start+0x21 (/usr/bin/lockbench)\n\n";
        if (out.size() > (1 << 22) - 4096) {
            std::fwrite(out.data(), 1, out.size(), stdout);
            out.clear();
        }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return std::ferror(stdout) ? 1 : 0;
}
