# Sourced by the project's scripts: finds a JDK >= 22 and exports JAVA_HOME and PATH.
# A JDK older than 22 cannot run java.lang.foreign: say so plainly instead of failing later.
# The major version from the JDK's release file (no JVM start: under emulation that alone takes seconds, and
# bin/nvmf-target sources this on every start); from the JVM itself where there is no release file.
nvmf_java_major() {
  local line
  if [ -r "$1/release" ]; then
    while IFS= read -r line; do
      case $line in
        JAVA_VERSION=*) line=${line#JAVA_VERSION=}; line=${line//\"/}; echo "${line%%[.+-]*}"; return 0 ;;
      esac
    done < "$1/release"
  fi
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}
nvmf_find_jdk() {
  local c m
  for c in "${NVMF_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    [ -n "$c" ] && [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] || continue
    m=$(nvmf_java_major "$c")
    if [ -n "$m" ] && [ "$m" -ge 22 ]; then echo "$c"; return 0; fi
  done
  return 1
}
if ! NVMF_JDK=$(nvmf_find_jdk); then
  echo "nvmf-target: no JDK 22 or newer found (it needs java.lang.foreign, final in JDK 22)." >&2
  echo "  Install one (e.g. Temurin 25) and set JAVA_HOME, or NVMF_JAVA_HOME, to it." >&2
  exit 3
fi
export JAVA_HOME="$NVMF_JDK"
export PATH="$JAVA_HOME/bin:$PATH"
