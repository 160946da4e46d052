# Sourced by the jobs that run the rdma4j tool in the VM (`. "$INTEROP_DIR/tools-env.sh" JOB`): sets
# REPO, JAVA (the JDK 25) and MODULE_PATH (the built tools jar and its lib/), or prints
# "FAIL JOB: ..." and returns 1 when the project has not been built on the host.
REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
TOOLS_JAR="$(ls "$REPO"/tools/target/rdma4j-tools-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -n 1)"
if [[ -z $TOOLS_JAR || ! -d $REPO/tools/target/lib ]]; then
  echo "FAIL ${1:-job}: build the project on the host first (./mvnw -DskipTests install)"
  return 1
fi
MODULE_PATH="$REPO/tools/target/lib:$TOOLS_JAR"
