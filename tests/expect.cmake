# Runs the command after "--" and fails unless it exits with EXPECT_EXIT and
# its output (stdout and stderr together) matches EXPECT_OUTPUT; a command
# that exits with SKIP_EXIT (when given) is reported as skipped. Written for
# semroute_expect_test (cmake/SemrouteExpectTest.cmake):
#   cmake -DEXPECT_EXIT=1 "-DEXPECT_OUTPUT=regex" [-DSKIP_EXIT=77] -P expect.cmake -- command args...
set(command)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    string(REPLACE ";" "\\;" argument "${CMAKE_ARGV${i}}")  # one argument, even with a ';'
    list(APPEND command "${argument}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT command OR NOT DEFINED EXPECT_EXIT OR NOT DEFINED EXPECT_OUTPUT)
  message(FATAL_ERROR "usage: cmake -DEXPECT_EXIT=N -DEXPECT_OUTPUT=REGEX [-DSKIP_EXIT=N] -P expect.cmake -- COMMAND...")
endif()

# `status` is the exit code, or a sentence ("Segmentation fault") for a signal.
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(DEFINED SKIP_EXIT AND "${status}" STREQUAL "${SKIP_EXIT}")
  message("expect: skipped (exit ${status})")
  return()
endif()
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expect: exit status '${status}', expected ${EXPECT_EXIT}")
endif()
if(NOT "${output}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "expect: the output does not match /${EXPECT_OUTPUT}/")
endif()
