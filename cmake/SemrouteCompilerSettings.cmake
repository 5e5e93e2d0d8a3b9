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
