# SPDX-License-Identifier: Apache-2.0
# The installed C++ package, for programs that put their own SystemC/TLM-2.0 models beside the
# simulator's (examples/systemc): `cmake --install build --prefix P`, then in the program's project
#   find_package(IndexSim REQUIRED)           # with CMAKE_PREFIX_PATH=P
#   target_link_libraries(app PRIVATE IndexSim::indexsim)
# It installs libindexsim.so (every part of the simulator), the headers under include/indexsim
# (included as in the tree: "sim/engine/simulation.hpp"), the configs under share/indexsim (found at
# run time next to the library: sim/core/paths.cpp), the indexsim executable and the CMake package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The static parts, whole: model files and techniques register themselves in static initialisers.
add_library(indexsim_shared SHARED ${CMAKE_SOURCE_DIR}/cmake/indexsim_shared.cpp)
set_target_properties(indexsim_shared PROPERTIES OUTPUT_NAME indexsim EXPORT_NAME indexsim
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
target_link_libraries(indexsim_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,indexsim_sim>")
# What a program that includes the headers needs: SystemC/TLM, yaml-cpp and nlohmann/json appear in them.
target_link_libraries(indexsim_shared INTERFACE PkgConfig::SYSTEMC yaml-cpp nlohmann_json::nlohmann_json)
target_include_directories(indexsim_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/indexsim>)

install(TARGETS indexsim_shared EXPORT IndexSimTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(NOT INDEXSIM_BUILD_PYTHON)  # else analysis/CMakeLists.txt installs it, beside the libraries it carries
  install(TARGETS indexsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(dir models sim traces kernels/cpu)
  get_filename_component(parent ${dir} DIRECTORY)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/indexsim/${parent}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endforeach()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/configs DESTINATION ${CMAKE_INSTALL_DATADIR}/indexsim)

set(INDEXSIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/IndexSim)
install(EXPORT IndexSimTargets NAMESPACE IndexSim:: DESTINATION ${INDEXSIM_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/IndexSimConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/IndexSimConfig.cmake INSTALL_DESTINATION ${INDEXSIM_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/IndexSimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/IndexSimConfig.cmake ${CMAKE_BINARY_DIR}/IndexSimConfigVersion.cmake
        DESTINATION ${INDEXSIM_CMAKE_DIR})
