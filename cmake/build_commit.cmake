# Writes OUT (a header defining CSTOOL_BUILD_COMMIT) with the commit the sources in SRC are
# at: its abbreviated hash, "-dirty" when the work tree differs from it, or "unknown"
# outside a git checkout. Run at every build; the file is rewritten only when the text
# changes, so only its includer recompiles.
#
# Root building a checkout another user owns is usual here (make needs root to trace):
# git then refuses the repository ("dubious ownership"), and the hash is read from .git
# itself (without -dirty) rather than trusting that user's git configuration as root.
set(commit "")
find_program(GIT git)
if(GIT)
  execute_process(
    COMMAND "${GIT}" -C "${SRC}" rev-parse --show-toplevel
    OUTPUT_VARIABLE top
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE status)
  # (Sources unpacked inside another repository are not that repository's commit.)
  if(status EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SRC}" src_real)
  endif()
  if(status EQUAL 0 AND top STREQUAL src_real)
    # --exclude=*: the hash even where tags exist, never "v1.2-3-g<hash>".
    execute_process(
      COMMAND "${GIT}" -C "${SRC}" describe --always --dirty --abbrev=12 --exclude=*
      OUTPUT_VARIABLE commit
      OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET
      RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      set(commit "")
    endif()
  endif()
endif()
if(commit STREQUAL "" AND EXISTS "${SRC}/.git/HEAD")
  file(READ "${SRC}/.git/HEAD" head)
  string(STRIP "${head}" head)
  set(hash "")
  if(head MATCHES "^ref: (.+)$")
    set(ref "${CMAKE_MATCH_1}")
    if(EXISTS "${SRC}/.git/${ref}")
      file(READ "${SRC}/.git/${ref}" hash)
      string(STRIP "${hash}" hash)
    elseif(EXISTS "${SRC}/.git/packed-refs")
      file(STRINGS "${SRC}/.git/packed-refs" packed REGEX " ${ref}$")
      if(packed MATCHES "^([0-9a-f]+) ")
        set(hash "${CMAKE_MATCH_1}")
      endif()
    endif()
  elseif(head MATCHES "^[0-9a-f]+$")
    set(hash "${head}")
  endif()
  if(hash MATCHES "^[0-9a-f]+$")
    string(SUBSTRING "${hash}" 0 12 commit)
  endif()
endif()
if(commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#pragma once\n#define CSTOOL_BUILD_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
