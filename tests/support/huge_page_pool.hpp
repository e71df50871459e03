// Tests of `--lock-page huge` set the kernel's hugetlb pool (vm.nr_hugepages) to what they need:
// empty, to see the refusal, or a few pages, to see the lock placed. The pool is the whole
// machine's, and CTest runs tests of several binaries at once, so every test that changes it, or
// depends on its size, holds an exclusive lock on one file for its duration
// (HugePagePoolForTest below); the values found are restored at the end. Setting the pool needs
// root and a writable /proc/sys (not in most containers): elsewhere `usable()` is false and
// `why_not()` says why, for GTEST_SKIP.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

namespace lockprof::test {

class HugePagePoolForTest {
  public:
    // Sets vm.nr_hugepages to `pages` and vm.nr_overcommit_hugepages to 0 (surplus pages would
    // let a mapping succeed with an empty pool).
    explicit HugePagePoolForTest(unsigned pages) {
        lock_fd_ =
            open("/tmp/lockprof-test-huge-page-pool.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
        if (geteuid() != 0) {
            why_not_ = "not root: only root may size the hugetlb pool (vm.nr_hugepages)";
            return;
        }
        pages_ = read_value(kPages);
        overcommit_ = read_value(kOvercommit);
        if (!pages_ || !overcommit_) {
            why_not_ = "no hugetlb pool in this kernel (/proc/sys/vm/nr_hugepages unreadable)";
            return;
        }
        if (!write_value(kOvercommit, 0) || !write_value(kPages, pages)) {
            why_not_ = "cannot write /proc/sys/vm/nr_hugepages (read-only /proc/sys?)";
            return;
        }
        const auto now = read_value(kPages);
        if (!now || *now != pages) {
            why_not_ = "the kernel could not reserve " + std::to_string(pages) +
                       " huge pages (memory too fragmented?)";
            return;
        }
        usable_ = true;
    }
    ~HugePagePoolForTest() {
        if (overcommit_) write_value(kOvercommit, *overcommit_);
        if (pages_) write_value(kPages, *pages_);
        if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
    }
    HugePagePoolForTest(const HugePagePoolForTest&) = delete;
    HugePagePoolForTest& operator=(const HugePagePoolForTest&) = delete;

    bool usable() const { return usable_; }
    const std::string& why_not() const { return why_not_; }

  private:
    static constexpr const char* kPages = "/proc/sys/vm/nr_hugepages";
    static constexpr const char* kOvercommit = "/proc/sys/vm/nr_overcommit_hugepages";

    static std::optional<unsigned long> read_value(const char* path) {
        std::ifstream in(path);
        unsigned long value = 0;
        if (!(in >> value)) return std::nullopt;
        return value;
    }
    static bool write_value(const char* path, unsigned long value) {
        std::ofstream out(path);
        out << value << '\n';
        out.flush();
        return static_cast<bool>(out);
    }

    int lock_fd_ = -1;
    std::optional<unsigned long> pages_, overcommit_;
    bool usable_ = false;
    std::string why_not_;
};

}  // namespace lockprof::test
