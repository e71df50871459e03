# Finds libpfm4 (Debian: libpfm4-dev), which ships neither a CMake config nor a pkg-config file.
# Defines the imported target Pfm4::pfm.
find_path(PFM4_INCLUDE_DIR NAMES perfmon/pfmlib_perf_event.h)
find_library(PFM4_LIBRARY NAMES pfm)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Pfm4 REQUIRED_VARS PFM4_LIBRARY PFM4_INCLUDE_DIR)
if(Pfm4_FOUND AND NOT TARGET Pfm4::pfm)
  add_library(Pfm4::pfm UNKNOWN IMPORTED)
  set_target_properties(Pfm4::pfm PROPERTIES
    IMPORTED_LOCATION "${PFM4_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PFM4_INCLUDE_DIR}")
endif()
mark_as_advanced(PFM4_INCLUDE_DIR PFM4_LIBRARY)
