#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: `rdma4j perf TEST -R` against perftest's `ib_TEST -R` (the
# rdma_cm mode: the exchange goes over an RC QP the connection managers connect, the test QPs are
# connected by them too) for write_lat, send_lat and write_bw, both roles, on the native provider on
# rxe0 (librdmacm) and on a soft device over RoCEv2/UDP in namespace peer (rdma4j's IB CM as MADs on
# its QP1, against the kernel's rdma_cm and ib_cm on rxe0). It is jobs/perf.sh with
# INTEROP_PERF_RDMA_CM=1: the same checks (result rows, MTU, each end's local address lines are the
# other's remote ones) and the same INTEROP_PERF_* settings.
#
#   INTEROP_PERF_CM_TESTS  tests to run (default: write_lat send_lat write_bw)
export INTEROP_PERF_RDMA_CM=1
export INTEROP_PERF_TESTS="${INTEROP_PERF_CM_TESTS:-write_lat send_lat write_bw}"
exec bash "$INTEROP_DIR/jobs/perf.sh"
