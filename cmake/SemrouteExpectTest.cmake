# semroute_expect_test(NAME name [EXIT code] OUTPUT regex [SKIP_EXIT code] COMMAND command args...)
#
# A test that passes only when the command exits with `code` (0 unless
# given) and its output, stdout and stderr together, matches `regex`
# (CMake's syntax, as in PASS_REGULAR_EXPRESSION). ctest's own
# PASS_REGULAR_EXPRESSION ignores the exit status: a command that printed
# the line and then failed, or crashed, would pass. A death by a signal
# never passes. SKIP_EXIT: the exit code by which the command says it
# skipped (ctest shows the test as skipped). As with add_test, a command
# that names an executable target runs that target's file.
get_filename_component(SEMROUTE_EXPECT_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/../tests/expect.cmake ABSOLUTE)

function(semroute_expect_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;EXIT;OUTPUT;SKIP_EXIT" "COMMAND")
  if(NOT arg_NAME OR NOT arg_COMMAND OR "${arg_OUTPUT}" STREQUAL "")
    message(FATAL_ERROR "semroute_expect_test needs NAME, OUTPUT and COMMAND")
  endif()
  if(NOT DEFINED arg_EXIT)
    set(arg_EXIT 0)
  endif()
  list(GET arg_COMMAND 0 program)
  if(TARGET ${program})
    list(POP_FRONT arg_COMMAND)
    list(PREPEND arg_COMMAND $<TARGET_FILE:${program}>)
  endif()
  set(skip)
  if(DEFINED arg_SKIP_EXIT)
    set(skip -DSKIP_EXIT=${arg_SKIP_EXIT})
  endif()
  add_test(NAME ${arg_NAME}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${arg_EXIT} "-DEXPECT_OUTPUT=${arg_OUTPUT}" ${skip}
                   -P ${SEMROUTE_EXPECT_SCRIPT} -- ${arg_COMMAND})
  if(DEFINED arg_SKIP_EXIT)
    set_tests_properties(${arg_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "expect: skipped \\(exit ${arg_SKIP_EXIT}\\)")
  endif()
endfunction()
