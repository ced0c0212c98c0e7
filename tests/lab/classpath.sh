#!/usr/bin/env bash
# Compiles the modules the lab's Java programs need and prints the class path to give a guest
# (LAB_CLASSPATH): the tests module's classes and test classes, the sibling modules' classes, and the jars
# from the local Maven repository; host paths, which the guest sees as they are.
#
#   LAB_CLASSPATH=$(tests/lab/classpath.sh) tests/lab/lab.sh verbs-scenario
#
# NVMF_BUILD_DIR (default target) picks the Maven output folder, as in scripts/test-all.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
# shellcheck source=../../scripts/env.sh
. scripts/env.sh
B=${NVMF_BUILD_DIR:-target}
mvn -B -q -DbuildDir="$B" -pl tests -am test-compile dependency:build-classpath \
  -Dmdep.outputFile="$B/lab-classpath.txt" -Dmdep.includeScope=test >&2
echo "$ROOT/tests/$B/test-classes:$ROOT/tests/$B/classes:$(cat "$ROOT/tests/$B/lab-classpath.txt")"
