# SPDX-License-Identifier: MIT
# `make uninstall`: removes every file the last install wrote, as
# install_manifest.txt in the build directory lists them, under DESTDIR
# when the environment sets it (as for the install).
set(manifest ${CMAKE_CURRENT_BINARY_DIR}/install_manifest.txt)
if(NOT EXISTS ${manifest})
  message(FATAL_ERROR "nothing to uninstall: no ${manifest}")
endif()
file(STRINGS ${manifest} files)
foreach(listed ${files})
  set(f "$ENV{DESTDIR}${listed}")
  if(EXISTS ${f} OR IS_SYMLINK ${f})
    file(REMOVE ${f})
    message(STATUS "removed ${f}")
  endif()
endforeach()
