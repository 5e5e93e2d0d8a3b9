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

# A shared library must resolve every symbol at link time, except under clang's
# sanitizers: clang links their runtimes into executables only, so the
# library's sanitizer symbols resolve at load time there.
function(semroute_no_undefined target)
  if(NOT (SEMROUTE_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
