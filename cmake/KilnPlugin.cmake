# kiln_add_plugin(<name> SOURCES ... [LIBRARIES ...] [OUTPUT_DIR dir]): a backend plugin as
# a loadable module named kiln_<name>.so, in lib/kiln/ unless OUTPUT_DIR says otherwise. Hidden visibility plus a version script, so the only
# exported symbol is the ABI entry point and two plugins never collide.
function(kiln_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${KILN_PLUGIN_OUTPUT_DIR})
  endif()
  set(target kiln_plugin_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME kiln_${name}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE kiln_sdk ${ARG_LIBRARIES})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${KILN_SDK_DIR}/plugin.map -Wl,--no-undefined)
  kiln_warnings(${target})
  set_property(GLOBAL APPEND PROPERTY KILN_PLUGIN_TARGETS ${target})
endfunction()
