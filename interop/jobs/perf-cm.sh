#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: `rdma4j perf TEST -R` against perftest's `ib_TEST -R` (the
# rdma_cm mode: the exchange goes over an RC QP the connection managers connect, the test QPs are
# connected by them too) on the native provider on rxe0 (librdmacm) and on a soft device over
# RoCEv2/UDP in namespace peer (rdma4j's IB CM as MADs on its QP1, against the kernel's rdma_cm and
# ib_cm on rxe0): in each mode write_lat with rdma4j as the client and send_lat with rdma4j serving
# (4 runs; INTEROP_FULL=1 adds write_lat with rdma4j serving and write_bw with rdma4j as the client,
# 8 runs, about 3 minutes). It is jobs/perf.sh with
# INTEROP_PERF_RDMA_CM=1: the same checks (result rows, MTU, each end's local address lines are the
# other's remote ones) and the same INTEROP_PERF_* settings.
#
#   INTEROP_PERF_CM_RUNS   the runs (perf.sh's INTEROP_PERF_RUNS; default "write_lat:cx send_lat:xc":
#                          rdma4j as the client and as the server in each mode, 4 runs; with
#                          INTEROP_FULL=1 "write_lat:xc write_lat:cx send_lat:xc write_bw:cx", 8 runs);
#                          "all" runs write_lat, send_lat and write_bw in both roles (12 runs, about
#                          5 minutes)
export INTEROP_PERF_RDMA_CM=1
export INTEROP_PERF_TESTS="write_lat send_lat write_bw"
default_runs="write_lat:cx send_lat:xc"
[[ ${INTEROP_FULL:-0} == 1 ]] && default_runs="write_lat:xc write_lat:cx send_lat:xc write_bw:cx"
runs="${INTEROP_PERF_CM_RUNS:-$default_runs}"
if [[ $runs == all ]]; then unset INTEROP_PERF_RUNS; else export INTEROP_PERF_RUNS="$runs"; fi
exec bash "$INTEROP_DIR/jobs/perf.sh"
