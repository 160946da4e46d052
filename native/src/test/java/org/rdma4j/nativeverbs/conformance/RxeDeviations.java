// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.conformance;

import java.util.List;

/**
 * Where the kernel's rxe of the interop VM (Debian's Linux 6.1) answers differently from the contract
 * (docs/SEMANTICS.md), found by running the suites on it through the native provider. Each entry says
 * what rxe or libibverbs does instead; a C program on the same device sees the same, because the
 * native provider passes the verbs through unchanged. The suites skip these tests on the native setup
 * with the reason, so the report lists every departure. The soft device follows the contract (and the
 * current rxe source) in each of them.
 */
final class RxeDeviations {
    private RxeDeviations() {}

    /** One departure: a suite, a test method, optionally the invocations whose display name contains {@code display}. */
    record Deviation(String suite, String method, String display, String why) {
        boolean matches(String s, String m, String d) {
            return suite.equals(s) && method.equals(m) && (display == null || d.contains(display));
        }
    }

    private static final String RING = "rxe sizes a work queue as a ring of 2^n slots and accepts posts until the"
            + " ring is full, which is more than the max_send_wr/max_recv_wr it reports: no ENOMEM at cap + 1";
    private static final String BAD_LKEY_GATHER = "rxe completes a gather through a bad or foreign lkey with"
            + " LOC_QP_OP_ERR, not LOC_PROT_ERR";

    static final List<Deviation> ALL = List.of(
            new Deviation("PostingConformanceTest", "moreSendWorkRequestsThanMaxFailsEnomem", null, RING),
            new Deviation("PostingConformanceTest", "moreRecvWorkRequestsThanMaxFailsEnomem", null, RING),
            new Deviation("PostingConformanceTest", "recvChainLongerThanTheQueueReportsTheFirstWrNotPosted", null, RING),
            new Deviation("CompletionQueueConformanceTest", "overflowRaisesCqErrAndMovesItsQpsToErr", null,
                    "rxe raises CQ_ERR on overflow but leaves the CQ's queue pairs in RTS"),
            new Deviation("SendQueueDrainConformanceTest", "workPostedInSqdWaitsUntilRts", null,
                    "rxe does not resume a send queue whose work was posted in SQD when the QP returns to RTS"),
            new Deviation("SendQueueDrainConformanceTest", "leavingSqdWhileTheSendQueueIsStillDrainingFailsEinval", null,
                    "rxe lets a QP leave SQD while its send queue is still draining"),
            new Deviation("SendQueueDrainConformanceTest", "sqdWithoutNotifyRaisesNoEvent", null,
                    "rxe raises SQ_DRAINED without en_sqd_async_notify"),
            new Deviation("PortStateConformanceTest", "rcSendFromADownPortEndsInRetryExcErr", null,
                    "rxe completes a send it cannot transmit (net device down) at once with LOC_QP_OP_ERR instead of"
                            + " retrying until RETRY_EXC_ERR"),
            new Deviation("PortStateConformanceTest", "rcSendToADownPortEndsInRetryExcErr", null,
                    "both ends are on one rxe device (rxe reaches a GID only through its own net device), so the"
                            + " peer's port is this port: rxe fails the send at once with LOC_QP_OP_ERR"),
            new Deviation("PortStateConformanceTest", "rcSendAcrossAShortOutageIsRecoveredByRetransmission", null,
                    "rxe fails a send posted while its net device is down at once (LOC_QP_OP_ERR), so there is"
                            + " nothing to retransmit after the outage"),
            new Deviation("ErrorOutcomeConformanceTest", "invalidLocalGatherCompletesWithLocProtErr", null,
                    BAD_LKEY_GATHER),
            new Deviation("ErrorOutcomeConformanceTest", "sendLongerThanTheReceiveBufferIsRemoteInvalidRequestAndLocalLengthError",
                    null, "rxe NAKs a SEND longer than the receive buffer as a remote operation error: the sender"
                            + " completes with REM_OP_ERR, not REM_INV_REQ_ERR"),
            new Deviation("ErrorOutcomeConformanceTest", "afterAnErrorEveryOutstandingAndLaterRequestIsFlushed", null,
                    "rxe flushes a send posted after the QP entered ERR but never completes a receive posted then"),
            new Deviation("ErrorOutcomeConformanceTest", "gatherFromFreedMemoryCompletesWithLocProtErrAtOnce", null,
                    "closing the arena deregistered the region, so the gather names a bad lkey: " + BAD_LKEY_GATHER),
            new Deviation("MemoryRegionConformanceTest", "deregWhileASendNamesItSucceedsAndTheSendCompletesWithLocProtErr",
                    null, "rxe does not resume a send queue whose work was posted in SQD when the QP returns to RTS;"
                            + " and a gather through a deregistered lkey completes LOC_QP_OP_ERR, not LOC_PROT_ERR"),
            new Deviation("MemoryRegionConformanceTest", "deregWithBoundType2WindowIsRefusedEbusy", null,
                    "rxe refuses to deregister a region with a bound type 2 window with EINVAL, not EBUSY"),
            new Deviation("AsyncEventConformanceTest", "lastWqeReachedOfADestroyedQpIsNotDelivered", null,
                    "rxe raises no QP_LAST_WQE_REACHED for a QP on an SRQ that goes to ERR"),
            new Deviation("AsyncEventConformanceTest", "eventsAreDeliveredInOrderAndOnlyOnce", null,
                    "rxe raises no QP_LAST_WQE_REACHED for a QP on an SRQ that goes to ERR"),
            new Deviation("AsyncEventConformanceTest", "qpWithAnUnacknowledgedEventRefusesToCloseUntilItIsAcknowledged",
                    null, "rxe raises no QP_LAST_WQE_REACHED for a QP on an SRQ that goes to ERR"),
            new Deviation("UdConformanceTest", "grhAreaHoldsThePacketsRealNetworkHeader", null,
                    "libibverbs' ibv_wc has no network header type (the kernel's ib_wc.network_hdr_type does not"
                            + " cross uverbs; C reads the GRH area, as ibv_init_ah_from_wc does)"),
            new Deviation("UdConformanceTest", "datagramTooLongForTheReceiveLeavesTheUdQpWorking", null,
                    "rxe moves a UD QP to ERR when a datagram is longer than its receive buffer"),
            new Deviation("MemoryWindowConformanceTest", "accessOutsideTheWindowFailsRemAccessErr", null,
                    "rxe checks an access through a window's rkey against the region's bounds, not the window's"),
            new Deviation("MemoryWindowConformanceTest", "type2ZeroBasedWindowIsAddressedFromZero", null,
                    "rxe checks an access through a window's rkey against the region's bounds, not the window's:"
                            + " a write past a zero-based window's end succeeds"),
            new Deviation("MemoryWindowConformanceTest", "type2SendWithInvalidateFromThePeerRevokesIt", null,
                    "rxe marks the receive of a SEND_WITH_INV with the kernel's IB_WC_WITH_INVALIDATE bit (1 << 2),"
                            + " which libibverbs calls IBV_WC_IP_CSUM_OK; IBV_WC_WITH_INV (1 << 3) stays clear"),
            new Deviation("EventPollerConformanceTest", "eachSourceWakesThePollerAndIsReportedPrecisely", null,
                    "its async-event half waits for QP_LAST_WQE_REACHED, which rxe does not raise for a QP on an"
                            + " SRQ that goes to ERR"),
            new Deviation("MemoryWindowConformanceTest",
                    "sendWithInvalidateOfPlainMrOrType1WindowIsRemoteInvalidRequestAndKeyStaysValid", null,
                    "rxe completes a SEND_WITH_INV naming a plain region's or a type 1 window's rkey successfully"),
            new Deviation("MemoryWindowConformanceTest", "type2BindWithUnknownAccessBitsCompletesWithMwBindErr", null,
                    "rxe binds a type 2 window with access bits it does not know"),
            new Deviation("MemoryWindowConformanceTest", "type1ZeroBasedBindCompletesWithMwBindErr", null,
                    "librxe refuses a zero-based type 1 bind in ibv_bind_mw itself (EINVAL), before any completion"));

    /** Why the test differs on rxe, or null. */
    static String why(String suite, String method, String display) {
        for (Deviation d : ALL) {
            if (d.matches(suite, method, display)) {
                return "Linux 6.1 rxe: " + d.why();
            }
        }
        return null;
    }
}
