#include <algorithm>
#include <cmath>

#include "lockprof/workload/results.hpp"

namespace lockprof::workload {

std::uint64_t LatencyHistogram::bucket_upper(unsigned bucket) {
    constexpr std::uint64_t kLinear = std::uint64_t{1} << kSubBits;
    if (bucket < kLinear) return bucket;
    const unsigned shift = (bucket >> kSubBits) - 1;
    const std::uint64_t sub = bucket & (kLinear - 1);
    const std::uint64_t low = (kLinear + sub) << shift;
    return low + ((std::uint64_t{1} << shift) - 1);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
    max_ = std::max(max_, other.max_);
}

std::uint64_t LatencyHistogram::quantile(double q) const {
    if (total_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(
        std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(total_)));
    std::uint64_t seen = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
        seen += counts_[i];
        if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(bucket_upper(i), max_);
    }
    return max_;
}

std::vector<std::pair<unsigned, std::uint64_t>> LatencyHistogram::nonzero() const {
    std::vector<std::pair<unsigned, std::uint64_t>> out;
    for (unsigned i = 0; i < kBuckets; ++i)
        if (counts_[i] != 0) out.emplace_back(i, counts_[i]);
    return out;
}

void LatencyHistogram::set_bucket(unsigned index, std::uint64_t count) {
    if (index >= kBuckets) return;
    total_ -= counts_[index];
    counts_[index] = count;
    total_ += count;
}

}  // namespace lockprof::workload
