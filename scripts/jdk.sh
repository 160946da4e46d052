# Sourced by mvnw, rdma4j and .ci/run: selects a JDK >= 25 into JAVA_HOME or fails saying what to install.
rdma4j_select_jdk() {
  local cand v
  for cand in "${RDMA4J_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64; do
    [ -n "$cand" ] && [ -x "$cand/bin/java" ] || continue
    # The JDK's release file names its version without starting a JVM (a tenth of a second per launch of
    # ./rdma4j); asked from the JVM only when the file is not there or says nothing.
    v=
    if [ -f "$cand/release" ]; then
      v=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$cand/release")
    fi
    [ -n "$v" ] || v=$("$cand/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [ -n "$v" ] && [ "${v%%.*}" -ge 25 ] 2>/dev/null; then export JAVA_HOME="$cand"; return 0; fi
  done
  if command -v java >/dev/null 2>&1; then
    v=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [ -n "$v" ] && [ "${v%%.*}" -ge 25 ] 2>/dev/null; then
      export JAVA_HOME="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.home = //p')"
      return 0
    fi
  fi
  echo "rdma4j: needs a JDK 25 or newer. Install Temurin 25 (/usr/lib/jvm/temurin-25-jdk-amd64)," >&2
  echo "        or set JAVA_HOME / RDMA4J_JAVA_HOME to a JDK >= 25." >&2
  return 1
}
