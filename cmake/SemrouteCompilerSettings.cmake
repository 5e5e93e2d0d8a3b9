# Warnings, ccache and sanitizer flags shared by every target.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

add_library(semroute_warnings INTERFACE)
target_compile_options(semroute_warnings INTERFACE -Wall -Wextra)

if(SEMROUTE_SANITIZE)
  string(REPLACE ";" "," _sanitizers "${SEMROUTE_SANITIZE}")
  add_compile_options(-fsanitize=${_sanitizers} -fno-omit-frame-pointer)
  if("undefined" IN_LIST SEMROUTE_SANITIZE)
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  add_link_options(-fsanitize=${_sanitizers})
endif()

# Test programs, and the CLI's commands in a sanitizer build, are not the code
# a run times: they compile for a short build (CI builds everything up to
# four times). Under ASan -O0 halves -O1's time (tests/unit/capi_test.cpp:
# 45 -> 25 s); in a release build -O1 takes 0.8 of -O3's. The library they
# call keeps the build's own flags.
function(semroute_compile_for_build_time target)
  if(SEMROUTE_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  else()
    target_compile_options(${target} PRIVATE $<$<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>>:-O1>)
  endif()
endfunction()

# A shared library must resolve every symbol at link time, except under clang's
# sanitizers: clang links their runtimes into executables only, so the
# library's sanitizer symbols resolve at load time there.
function(semroute_no_undefined target)
  if(NOT (SEMROUTE_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
