# What `cmake --install` puts under a prefix: bin/kiln, bin/kiln-conformance (the plugin
# conformance kit, its graphs in share/kiln/conformance), lib/libkiln.so (the runtime C API)
# with the Python bridge's C call path (lib/_kiln_call.abi3.so),
# the plugins in lib/kiln/, the public headers (include/kiln/: runtime.h, plugin.h and the
# SDK's C++ helpers) and a CMake package, so a project links the runtime with
#   find_package(kiln REQUIRED)  target_link_libraries(app PRIVATE kiln::runtime)
# and a plugin builds against the SDK with kiln::sdk.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS kiln RUNTIME DESTINATION bin)
# The conformance kit vendors run against their plugins, and the graphs it checks them with.
install(TARGETS kiln-conformance RUNTIME DESTINATION bin)
install(DIRECTORY conformance/graphs/ DESTINATION share/kiln/conformance/graphs
        FILES_MATCHING PATTERN "*.json")
install(TARGETS kiln_runtime EXPORT kilnTargets LIBRARY DESTINATION lib)
# The Python bridge's C call path, beside libkiln.so where the bridge looks for it.
if(TARGET kiln_python_call)
  install(TARGETS kiln_python_call LIBRARY DESTINATION lib)
endif()
get_property(kiln_plugin_targets GLOBAL PROPERTY KILN_PLUGIN_TARGETS)
foreach(target IN LISTS kiln_plugin_targets)
  # Test plugins stay in the build tree.
  get_target_property(dir ${target} LIBRARY_OUTPUT_DIRECTORY)
  if(dir STREQUAL KILN_PLUGIN_OUTPUT_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION lib/kiln)
  endif()
endforeach()
install(FILES sdk/include/kiln/runtime.h sdk/include/kiln/plugin.h sdk/include/kiln/plugin.hpp
              sdk/include/kiln/shared_fd_memory.hpp
              sdk/include/kiln/kir.hpp
        DESTINATION include/kiln)
install(FILES sdk/plugin.map DESTINATION share/kiln)

add_library(kiln_sdk_installed INTERFACE)
set_target_properties(kiln_sdk_installed PROPERTIES EXPORT_NAME sdk)
target_include_directories(kiln_sdk_installed INTERFACE $<INSTALL_INTERFACE:include>)
install(TARGETS kiln_sdk_installed EXPORT kilnTargets)
set_target_properties(kiln_runtime PROPERTIES EXPORT_NAME runtime)

install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION lib/cmake/kiln)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/kilnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION lib/cmake/kiln)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kilnConfig.cmake ${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION lib/cmake/kiln)
