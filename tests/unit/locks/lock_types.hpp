// Every lock of the catalog as a GoogleTest type list, for the typed lock tests: each lock
// with the platform's default delay where it accepts it, else none.
#pragma once

#include <gtest/gtest.h>

#include "lockprof/locks/catalog.hpp"

namespace lockprof::test {

template <typename List>
struct ToTypes;
template <template <arch::Delay> class... Ls>
struct ToTypes<locks::LockList<Ls...>> {
    template <template <arch::Delay> class L>
    using Pick = L<(L<arch::Delay::none>::kDelays & locks::delay_bit(arch::default_delay())) &&
                           arch::delay_available(arch::default_delay())
                       ? arch::default_delay()
                       : arch::Delay::none>;
    using type = ::testing::Types<Pick<Ls>...>;
};

using AllLockTypes = ToTypes<locks::AllLocks>::type;

}  // namespace lockprof::test
