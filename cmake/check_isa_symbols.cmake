# Build-time check (cmake -P) that objects compiled with extra -march extensions (the aarch64
# dotprod / i8mm kernels) define no external symbol but their entry point. Any other one (a
# non-static helper, a header inline function the compiler did not inline) would be a weak or
# global definition the linker may pick for baseline code too, which then dies with an illegal
# instruction on a CPU without the extension.
#   -DNM=<nm program> -DOBJECTS=<objects joined by |> -DPATTERN=<regex of checked object names>
#   -DALLOWED=<regex every defined external symbol of those objects must match>
string(REPLACE "|" ";" _objects "${OBJECTS}")
set(_checked 0)
foreach(_obj IN LISTS _objects)
  if(NOT _obj MATCHES "${PATTERN}")
    continue()
  endif()
  math(EXPR _checked "${_checked} + 1")
  execute_process(COMMAND ${NM} --defined-only --extern-only -C ${_obj}
                  OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${_obj}")
  endif()
  string(REPLACE "\n" ";" _lines "${_out}")
  foreach(_line IN LISTS _lines)
    if(_line STREQUAL "" OR _line MATCHES "${ALLOWED}")
      continue()
    endif()
    message(FATAL_ERROR "${_obj} is built with extra -march extensions but defines the external "
                        "symbol '${_line}': put it in the file's anonymous namespace (or make "
                        "sure it is only ever inlined), or baseline code may run its copy")
  endforeach()
endforeach()
if(_checked EQUAL 0)
  message(FATAL_ERROR "no object matched ${PATTERN}: the check would pass without checking")
endif()
