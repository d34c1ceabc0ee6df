// Minor page faults of this process's reaped children (getrusage RUSAGE_CHILDREN): a
// child forked and waited for adds some, so an unchanged count shows that none was.
#pragma once

#include <sys/resource.h>

namespace cstool::testing {

inline long ChildMinorFaults() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_minflt;
}

}  // namespace cstool::testing
