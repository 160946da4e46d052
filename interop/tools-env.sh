# Sourced by the jobs that run the rdma4j tool in the VM (`. "$INTEROP_DIR/tools-env.sh" JOB`): sets
# REPO, JAVA (the JDK 25) and MODULE_PATH (the built tools jar and its lib/), or prints
# "FAIL JOB: ..." and returns 1 when the project has not been built on the host.
REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
TOOLS_JAR="$(ls "$REPO"/tools/target/rdma4j-tools-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -n 1)"
if [[ -z $TOOLS_JAR || ! -d $REPO/tools/target/lib ]]; then
  echo "FAIL ${1:-job}: build the project on the host first (./mvnw -B -DskipTests package)"
  return 1
fi
MODULE_PATH="$REPO/tools/target/lib:$TOOLS_JAR"
# TOOL_AOT_OPTS: for the JVMs that run the rdma4j tool (-m org.rdma4j.tools with MODULE_PATH), the AOT
# cache interop/aot-cache.sh makes on the host (run.sh calls it): their classes come loaded and linked,
# which saves tens of seconds per JVM start under TCG. The JVM ignores a cache that does not match its
# module path or jars; its complaints (unified logging, on stdout) are turned off so that they cannot
# mix with a tool's output. Empty without the file.
TOOL_AOT_OPTS=
if [[ -f $REPO/tools/target/rdma4j-tools.aot ]]; then
  TOOL_AOT_OPTS="-XX:AOTCache=$REPO/tools/target/rdma4j-tools.aot -Xlog:aot*=off -Xlog:cds*=off"
fi
# interop_full: true when INTEROP_FULL=1 asks for a job's whole matrix. By default (what .ci/run runs)
# the jobs with long matrices run a subset that still covers every tool, transport, direction, address
# family and feature once; the full matrix repeats them across sizes, MTUs and both directions.
interop_full() { [[ ${INTEROP_FULL:-0} == 1 ]]; }
