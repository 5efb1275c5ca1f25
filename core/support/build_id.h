// Which build of the core is running: the GNU build ID of the binary the core is linked
// into (a hash of its linked contents, so any change to the compiler gives another), for
// the keys of cache entries whose contents the core itself computes.
#pragma once

#include <string>

namespace kiln {

// Hex digits of the build ID, or, when the binary carries none, of a digest of its file;
// empty when neither can be read (callers then cache nothing that depends on it).
std::string core_build_id();

}  // namespace kiln
