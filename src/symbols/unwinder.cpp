#include "lockprof/symbols/unwinder.hpp"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "symbols/dwfl_mappings.hpp"

namespace lockprof::symbols {
// A file mapped read-only into lockprof, for memory reads outside a sample's stack copy.
// Outside the anonymous namespace: unwinder_detail::State holds these (GCC's
// -Wsubobject-linkage, which a unity build turns on for this file).
namespace unwinder_detail {
struct MappedFile {
    const unsigned char* data = nullptr;
    std::size_t size = 0;
};
}  // namespace unwinder_detail

namespace {
using unwinder_detail::MappedFile;

// The vDSO has no file, but it has call frame information, and every 64-bit process of this
// kernel maps the same image: lockprof's own, copied once into a memory file libdwfl can open
// (perf keeps a copy of its own vDSO likewise), unwinds samples that land in any process's
// clock_gettime. `path` is "" where there is none (qemu-user may map none).
struct VdsoImage {
    std::string path;
    std::uint64_t first_vaddr = 0;  // the first PT_LOAD's address: the image is linked there
};

const VdsoImage& own_vdso() {
    static const VdsoImage image = [] {
        VdsoImage out;
        const auto base = getauxval(AT_SYSINFO_EHDR);
        if (base == 0) return out;
        std::uint64_t size = 0;
        try {
            for (const auto& m : process_modules())
                if (m.path == kVdso && m.start == base) size = m.end - m.start;
        } catch (const Error&) {
        }
        if (size == 0) return out;
        const int fd = memfd_create("lockprof-vdso", MFD_CLOEXEC);
        if (fd < 0) return out;
        const auto* bytes = reinterpret_cast<const unsigned char*>(base);
        if (::write(fd, bytes, size) != static_cast<ssize_t>(size)) {
            close(fd);
            return out;
        }
        elf_version(EV_CURRENT);
        if (Elf* elf = elf_memory(const_cast<char*>(reinterpret_cast<const char*>(bytes)), size)) {
            std::size_t count = 0;
            if (elf_getphdrnum(elf, &count) == 0)
                for (std::size_t i = 0; i < count; ++i) {
                    GElf_Phdr phdr;
                    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) && phdr.p_type == PT_LOAD) {
                        out.first_vaddr = phdr.p_vaddr;
                        break;
                    }
                }
            elf_end(elf);
        }
        // Kept open for lockprof's life: libdwfl opens it by this name when it needs it.
        out.path = fmt::format("/proc/self/fd/{}", fd);
        return out;
    }();
    return image;
}

// Reports the vDSO of `modules` (where the target has it) as lockprof's own image.
void report_vdso(Dwfl* dwfl, const std::vector<measure::MappedModule>& modules) {
    const VdsoImage& image = own_vdso();
    if (image.path.empty()) return;
    for (const auto& m : modules) {
        if (m.path != kVdso || m.start < image.first_vaddr) continue;
        dwfl_report_begin_add(dwfl);
        dwfl_report_elf(dwfl, "[vdso]", image.path.c_str(), -1, m.start - image.first_vaddr, false);
        dwfl_report_end(dwfl, nullptr, nullptr);
        return;
    }
}

}  // namespace

// Named, not anonymous: Unwinder::Impl derives from it (-Wsubobject-linkage in unity batches).
namespace unwinder_detail {

// libdwfl's process state is attached once, with the callbacks below; what they read (the
// sample being unwound) is changed before each dwfl_getthread_frames, so one Dwfl serves
// every sample of the image.
struct State {
    const arch::UnwindRegisters* registers = nullptr;
    Dwfl_Callbacks callbacks{};
    char* debuginfo_path = nullptr;
    Dwfl* dwfl = nullptr;
    std::string problem;
    // The recorded mappings by start address, for reads outside the stack copy.
    std::map<std::uint64_t, measure::MappedModule> mappings;
    std::map<std::string, MappedFile> files;  // opened on first read

    // The sample being unwound.
    arch::InitialFrame frame;
    std::span<const unsigned char> stack;
    std::vector<std::uint64_t>* out = nullptr;
    std::size_t max_frames = 0;
    bool at_sampled_frame = true;

    ~State() {
        if (dwfl) dwfl_end(dwfl);
        for (auto& [path, f] : files)
            if (f.data) munmap(const_cast<unsigned char*>(f.data), f.size);
    }

    const MappedFile& file(const std::string& path) {
        auto [it, added] = files.try_emplace(path);
        if (!added) return it->second;
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return it->second;
        struct stat st {};
        if (fstat(fd, &st) == 0 && st.st_size > 0) {
            void* data =
                mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (data != MAP_FAILED) {
                it->second.data = static_cast<const unsigned char*>(data);
                it->second.size = static_cast<std::size_t>(st.st_size);
            }
        }
        close(fd);
        return it->second;
    }

    // A word of the process's memory: from the stack copy, else from the file mapped there
    // (code and read-only data; a writable mapping reads as the file has it).
    bool read(std::uint64_t address, std::uint64_t& value) {
        const std::uint64_t sp = frame.sp;
        if (address >= sp && address - sp <= stack.size() && stack.size() - (address - sp) >= 8) {
            std::memcpy(&value, stack.data() + (address - sp), 8);
            return true;
        }
        auto it = mappings.upper_bound(address);
        if (it == mappings.begin()) return false;
        const auto& m = std::prev(it)->second;
        if (address >= m.end || m.end - address < 8 || m.path == kVdso) return false;
        const MappedFile& f = file(m.path);
        const std::uint64_t offset = address - m.start + m.offset;
        if (!f.data || offset > f.size || f.size - offset < 8) return false;
        std::memcpy(&value, f.data + offset, 8);
        return true;
    }
};

}  // namespace unwinder_detail

using unwinder_detail::State;

struct Unwinder::Impl : State {};

namespace {

// No thread is ever listed: dwfl_getthread_frames asks for the one being unwound by id.
pid_t next_thread(Dwfl*, void*, void**) {
    return 0;
}

bool get_thread(Dwfl*, pid_t, void* dwfl_arg, void** thread_arg) {
    *thread_arg = dwfl_arg;
    return true;
}

bool memory_read(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
    std::uint64_t value = 0;
    if (!static_cast<State*>(arg)->read(address, value)) return false;
    *result = value;
    return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
    const auto* u = static_cast<const State*>(arg);
    const auto& dwarf = u->frame.dwarf;
    if (!dwfl_thread_state_registers(thread, 0, static_cast<unsigned>(dwarf.size()), dwarf.data()))
        return false;
    if (!u->registers->pc_is_dwarf_register) dwfl_thread_state_register_pc(thread, u->frame.pc);
    return true;
}

int frame_callback(Dwfl_Frame* state, void* arg) {
    auto* u = static_cast<State*>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0) return DWARF_CB_ABORT;
    // The first frame is the sampled PC, which the sample holds already.
    if (u->at_sampled_frame) {
        u->at_sampled_frame = false;
        return DWARF_CB_OK;
    }
    // A call chain holds return addresses, read as "the call before it" (address - 1). A
    // frame interrupted by a signal holds the interrupted instruction itself: one past it
    // reads right.
    u->out->push_back(activation ? pc + 1 : pc);
    return u->out->size() >= u->max_frames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

const Dwfl_Thread_Callbacks kCallbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

}  // namespace

Unwinder::Unwinder(const std::vector<measure::MappedModule>& modules,
                   const arch::UnwindRegisters& registers)
    : impl_(std::make_unique<Impl>()) {
    impl_->registers = &registers;
    impl_->callbacks.find_elf = dwfl_linux_proc_find_elf;
    impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    impl_->callbacks.debuginfo_path = &impl_->debuginfo_path;
    impl_->dwfl = dwfl_begin(&impl_->callbacks);
    if (!impl_->dwfl) throw Error(fmt::format("elfutils: dwfl_begin failed: {}", dwfl_errmsg(-1)));
    for (const auto& m : modules)
        if (m.end > m.start) impl_->mappings[m.start] = m;
    report_mappings(impl_->dwfl, modules);
    report_vdso(impl_->dwfl, modules);
    // The process's architecture comes from the first module whose ELF file opens; the pid is
    // only a name here (no /proc is read: registers and memory come from the callbacks).
    if (!dwfl_attach_state(impl_->dwfl, nullptr, 1, &kCallbacks, static_cast<State*>(impl_.get())))
        impl_->problem = fmt::format("libdwfl cannot unwind these mappings: {}", dwfl_errmsg(-1));
}

Unwinder::~Unwinder() = default;
Unwinder::Unwinder(Unwinder&&) noexcept = default;
Unwinder& Unwinder::operator=(Unwinder&&) noexcept = default;

const std::string& Unwinder::problem() const {
    return impl_->problem;
}

std::vector<std::uint64_t> Unwinder::unwind(std::span<const std::uint64_t> sampled_registers,
                                            std::span<const unsigned char> stack,
                                            std::size_t max_frames) const {
    std::vector<std::uint64_t> chain;
    if (!impl_->problem.empty() || max_frames == 0) return chain;
    auto frame = arch::initial_frame(*impl_->registers, sampled_registers);
    if (!frame || frame->pc == 0) return chain;
    State& u = *impl_;
    u.frame = std::move(*frame);
    u.stack = stack;
    u.out = &chain;
    u.max_frames = max_frames;
    u.at_sampled_frame = true;
    // Ends at the outermost frame (0), at the first frame it cannot unwind, or when the
    // callback has enough (-1 or DWARF_CB_ABORT): the frames found so far are the chain.
    dwfl_getthread_frames(u.dwfl, 1, frame_callback, static_cast<State*>(&u));
    u.out = nullptr;
    u.stack = {};
    return chain;
}

namespace {

// Processes that map the same files at the same addresses unwind alike.
std::string image_signature(const std::vector<measure::MappedModule>& modules) {
    std::string out;
    for (const auto& m : modules)
        if (m.permissions.find('x') != std::string::npos)
            out += fmt::format("{}@{:x}-{:x}+{:x};", m.path, m.start, m.end, m.offset);
    return out;
}

}  // namespace

UnwinderCache::UnwinderCache(const arch::UnwindRegisters& registers) : registers_(registers) {}
UnwinderCache::~UnwinderCache() = default;

const Unwinder& UnwinderCache::unwinder_for(const std::vector<measure::MappedModule>& modules) {
    auto [it, added] = unwinders_.try_emplace(image_signature(modules));
    if (added) it->second = std::make_unique<Unwinder>(modules, registers_);
    return *it->second;
}

std::vector<std::uint64_t> UnwinderCache::unwind(
    std::span<const std::uint64_t> sampled_registers, std::span<const unsigned char> stack,
    const std::vector<measure::MappedModule>& modules) {
    const auto start = std::chrono::steady_clock::now();
    auto chain = unwinder_for(modules).unwind(sampled_registers, stack);
    ++stats_.stacks;
    stats_.frames += chain.size();
    if (chain.empty()) ++stats_.without_callers;
    stats_.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return chain;
}

void UnwinderCache::unwind(measure::RawSample& sample,
                           const std::vector<measure::MappedModule>& modules) {
    if (sample.user_regs.empty()) return;
    auto chain = unwind(sample.user_regs, sample.user_stack, modules);
    // A kernel-mode sample (--kernel) enters user space at the registers' PC: that frame
    // comes right after the kernel's, as a return address (the instruction after the system
    // call or the faulting one), then its callers.
    if (sample.ip >> 63) {
        if (const auto frame = arch::initial_frame(registers_, sample.user_regs))
            sample.callchain.push_back(frame->pc);
    }
    sample.callchain.insert(sample.callchain.end(), chain.begin(), chain.end());
    sample.user_regs = {};
    sample.user_stack = {};
}

}  // namespace lockprof::symbols
