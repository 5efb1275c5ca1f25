#!/bin/sh
# A C++ compiler that answers --version but builds nothing: a broken toolchain.
if [ "$1" = --version ]; then echo "broken-cc 1.0"; exit 0; fi
echo "broken-cc: cannot build anything" >&2
exit 1
