# SPDX-License-Identifier: MIT
# Run at install time (man/CMakeLists.txt): one relative symbolic link per
# name in PRINTK_MAN_ALIASES, in the section directory of its page under
# PRINTK_MANDIR (relative to the install prefix unless absolute), honouring
# DESTDIR. The links go into the install manifest like the pages.
if(IS_ABSOLUTE "${PRINTK_MANDIR}")
	set(mandir "$ENV{DESTDIR}${PRINTK_MANDIR}")
else()
	set(mandir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${PRINTK_MANDIR}")
endif()

file(STRINGS "${PRINTK_MAN_ALIASES}" lines)
set(page "")
foreach(line IN LISTS lines)
	if(line MATCHES "^#" OR line MATCHES "^[ \t]*$")
		continue()
	endif()
	string(REGEX MATCHALL "[^ \t]+" words "${line}")
	if(NOT line MATCHES "^[ \t]")
		list(POP_FRONT words page)
	endif()
	if(page STREQUAL "")
		message(FATAL_ERROR "${PRINTK_MAN_ALIASES}: continuation line before any page")
	endif()
	string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section "${page}")
	foreach(name IN LISTS words)
		set(link "${mandir}/man${section}/${name}.${section}")
		message(STATUS "Installing: ${link} -> ${page}")
		file(REMOVE "${link}")
		file(CREATE_LINK "${page}" "${link}" SYMBOLIC)
		list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${link}")
	endforeach()
endforeach()
