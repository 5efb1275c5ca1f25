# The CUDA toolkit is optional: detected here, never required. Targets and tests that
# need it check KILN_HAVE_CUDA_TOOLKIT and say why they are skipped.
find_program(KILN_PTXAS ptxas HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin)
if(KILN_PTXAS)
  set(KILN_HAVE_CUDA_TOOLKIT ON)
  message(STATUS "kiln: CUDA toolkit found (ptxas: ${KILN_PTXAS})")
else()
  set(KILN_HAVE_CUDA_TOOLKIT OFF)
  message(STATUS "kiln: CUDA toolkit not found; PTX assembly checks will be skipped")
endif()
