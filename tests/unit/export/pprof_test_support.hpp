// Reading back what export/pprof wrote: gunzip (zlib) and decode with the classes protoc
// generated from pprof's schema, plus string-table lookups, for the pprof tests of export/,
// analysis/ and record/.
#pragma once

#include <zlib.h>

#include <string>

#include <gtest/gtest.h>

#include "profile.pb.h"

namespace lockprof::exporting::pprof::test {

namespace proto = perftools::profiles;

inline std::string gunzip(const std::string& data) {
    z_stream z{};
    EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);  // gzip only
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    std::string out;
    char buffer[4096];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buffer, sizeof buffer - z.avail_out);
    }
    inflateEnd(&z);
    EXPECT_EQ(rc, Z_STREAM_END);
    return out;
}

inline proto::Profile decode(const std::string& gzipped) {
    proto::Profile p;
    EXPECT_TRUE(p.ParseFromString(gunzip(gzipped)));
    return p;
}

// A label's value as text ("tas", or "2" for a numeric one); "" when the sample lacks it.
inline std::string label(const proto::Profile& p, const proto::Sample& s, const std::string& key) {
    for (const auto& l : s.label())
        if (p.string_table(l.key()) == key)
            return l.str() ? p.string_table(l.str()) : std::to_string(l.num());
    return {};
}

}  // namespace lockprof::exporting::pprof::test
