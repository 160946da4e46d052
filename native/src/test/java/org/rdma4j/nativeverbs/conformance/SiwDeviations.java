// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.conformance;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Where softiwarp (siw, the kernel's software iWARP device, built for the interop VM's Linux 6.1 by
 * interop/siw-build.sh) answers differently from the contract (docs/SEMANTICS.md), found by running
 * the control-path suites on siw0 through the native provider (interop/jobs/siw.sh). Most are what
 * iWARP is: RC only (no UC, UD, address handles, P_Keys, memory windows or atomics), GIDs that are
 * MAC addresses, and QPs that reach RTS only through the connection manager (tests that connect QPs
 * by modify_qp abort through {@code ConformanceSetup.modifyQpConnectUnsupported} instead). The rest are
 * siw's own: its query_qp reports no QP state, its modify_qp looks only at the state and access flags.
 * A C program on siw0 sees the same: the native provider passes the verbs through unchanged.
 */
final class SiwDeviations {
    private SiwDeviations() {}

    /** One departure: a suite, a test method (null: any), the invocations whose display name matches {@code display} (null: all). */
    record Deviation(String suite, String method, Pattern display, String why) {
        boolean matches(String s, String m, String d) {
            return suite.equals(s) && (method == null || method.equals(m)) && (display == null || display.matcher(d).find());
        }
    }

    private static final Pattern UC_UD = Pattern.compile("(^|\\W)U[CD](\\W|$)");
    /** An invocation about an address handle or a memory window: "[10] AH", "MW_TYPE_2", "MW_VS_PD_CLOSE". */
    private static final Pattern AH = Pattern.compile("(^|\\W)AH(_|\\W|$)");
    private static final Pattern MW = Pattern.compile("(^|\\W)MW(_|\\W|$)");

    private static final String RC_ONLY = "siw makes RC QPs only: ibv_create_qp of UC or UD is EOPNOTSUPP (iWARP has"
            + " neither)";
    private static final String NO_AH = "siw has no address handles (no UD on iWARP): max_ah 0, ibv_create_ah is"
            + " EOPNOTSUPP";
    private static final String NO_MW = "siw has no memory windows: max_mw 0, ibv_alloc_mw is EOPNOTSUPP";
    private static final String NO_PKEY = "iWARP has no P_Keys: siw's pkey_tbl_len and max_pkeys are 0, so"
            + " ibv_query_pkey of index 0 is EINVAL (outside the port's empty table)";
    private static final String QP_STATE = "siw's query_qp reports no QP state (qp_state stays 0, RESET, whatever"
            + " the QP's state), and its modify_qp looks only at the state and the access flags: no EINVAL for a"
            + " missing or extra IB attribute; RTS needs the connection manager's TCP stream";
    private static final String RTS_BY_CM = "an iWARP RC QP reaches RTS only through the connection manager: siw's"
            + " modify_qp to RTS without its TCP stream is EINVAL";

    private static final String NO_IMM = "iWARP (RDMAP) has no immediate data: libsiw's ibv_post_send refuses"
            + " SEND_WITH_IMM and RDMA_WRITE_WITH_IMM with EINVAL (\"opcode unsupported\")";
    private static final String LOCAL_COMPLETION = "siw completes a SEND or WRITE once its data is in the TCP"
            + " stream, not when the peer acknowledges it (iWARP's verbs see no transport ACK): the responder's"
            + " error never reaches the sender's completion, and no posted SEND or WRITE stays outstanding";
    private static final String NO_RNR = "iWARP has no RNR: a SEND for which no receive is posted ends the"
            + " connection (siw sends a TERMINATE), it does not wait; and the SEND completed at the sender already";
    private static final String ZERO_SGE_RECV = "libsiw's ibv_post_recv refuses a receive with no SGE (EINVAL)";
    private static final String BAD_LKEY_GATHER = "siw completes a SEND or WRITE whose gather list fails the"
            + " local key check with LOC_QP_OP_ERR, not LOC_PROT_ERR";
    private static final String NO_QUERY_SRQ = "libsiw has no ibv_query_srq (EOPNOTSUPP), which the test reads the"
            + " SRQ's attributes back with";
    private static final String NO_QP_ACCESS = "siw checks an inbound WRITE or READ against the MR's access only,"
            + " never against the QP's remote access flags (siw_qp_rx.c)";

    static final List<Deviation> ALL = List.of(
            // --- the data-path suites over CM-connected pairs (CmQpConnector)
            new Deviation("SendRecvConformanceTest", "sendWithImmediateDeliversImmediateAndBytes", null, NO_IMM),
            new Deviation("RdmaWriteConformanceTest", "writeWithImmediateConsumesAReceiveAndReportsTheImmediate", null,
                    NO_IMM),
            new Deviation("RdmaWriteConformanceTest", "zeroLengthWriteWithImmediateNeedsNoReceiveBuffer", null,
                    NO_IMM + "; and " + ZERO_SGE_RECV),
            new Deviation("SendRecvConformanceTest", "zeroLengthSendIntoAReceiveWithoutSgesWorks", null, ZERO_SGE_RECV),
            new Deviation("SendRecvConformanceTest", "multiPacketMessagesCrossThePsnWrap", null,
                    "its second message is a SEND_WITH_IMM: " + NO_IMM + " (and iWARP has no PSNs to wrap)"),
            new Deviation("SendRecvConformanceTest", "queryReportsTheLivePsnsAfterTraffic", null,
                    "iWARP has no PSNs (it runs over TCP): siw's query_qp reports sq_psn and rq_psn 0"),
            new Deviation("CompletionChannelConformanceTest", "solicitedOnlyArmIgnoresUnsolicitedReceives", null,
                    "the receive completion of a SEND posted with IBV_SEND_SOLICITED did not wake a CQ armed"
                            + " solicited-only (siw notifies a solicited-only arm of no receive)"),
            new Deviation("CompletionChannelConformanceTest", "solicitedOnlyArmWakesForErrorCompletions", null,
                    "an error completion did not wake a CQ armed solicited-only on siw"),
            new Deviation("ErrorOutcomeConformanceTest", "receiveWithABadLkeyFailsWithRemOpErrAndLocQpOpErr", null,
                    LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest",
                    "sendLongerThanTheReceiveBufferIsRemoteInvalidRequestAndLocalLengthError", null, LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "qpInErrCanBeResetAndThenWorksAgain", null, LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "modifyToErrFlushesOutstandingSends", null, LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "rnrRetriesUntilAReceiveIsPosted", null, NO_RNR),
            new Deviation("ErrorOutcomeConformanceTest", "operationTheResponderQpDoesNotAllowCompletesWithRemInvReqErr",
                    null, NO_QP_ACCESS + "; and " + LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "readOrAtomicWithoutResponderResourcesIsRemoteInvalidRequest",
                    null, "siw served a READ on a connection whose responder accepted no read resources (IRD 0 in"
                            + " rdma_accept's parameters)"),
            new Deviation("ErrorOutcomeConformanceTest", "invalidLocalGatherCompletesWithLocProtErr", null,
                    "siw completes a SEND or WRITE whose gather list fails the local key check with LOC_QP_OP_ERR,"
                            + " not LOC_PROT_ERR"),
            new Deviation("ErrorOutcomeConformanceTest", "responseIntoFreedMemoryCompletesWithLocProtErrAtOnce",
                    Pattern.compile("READ"), "siw resolves a READ's local MR when it sends the request: an MR"
                            + " deregistered before the response arrives does not stop the placement (siw holds the"
                            + " pages until the READ completes, SUCCESS)"),
            new Deviation("ErrorOutcomeConformanceTest", "errorCompletionsKeepWrIdAndQpNum", null,
                    "its error is an RNR retry exhaustion: " + NO_RNR),
            new Deviation("ErrorOutcomeConformanceTest", "peerThatNeverAnswersExhaustsRetries", Pattern.compile("RESET"),
                    "TCP retransmits, not the QP: " + LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "peerThatNeverAnswersExhaustsRetries", Pattern.compile("ERR"),
                    "a WRITE to a peer whose QP was moved to ERR neither completed nor failed within 10 s (no"
                            + " transport retry count on iWARP; the TCP connection stays up)"),
            new Deviation("ErrorOutcomeConformanceTest", "receiveIntoFreedMemoryFailsLikeABadLkeyAtOnce", null,
                    LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "afterAnErrorEveryOutstandingAndLaterRequestIsFlushed", null,
                    LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "remoteAccessViolationCompletesWithRemAccessErrAndResponderGoesToErr",
                    Pattern.compile("WRITE"), LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "remoteAccessViolationCompletesWithRemAccessErrAndResponderGoesToErr",
                    Pattern.compile("READ"), "siw answers a READ the responder refuses (bad STag, bounds, rights) with"
                            + " a TERMINATE that ends the connection: the READ completes WR_FLUSH_ERR, not REM_ACCESS_ERR"),
            new Deviation("ErrorOutcomeConformanceTest", "noReceivePostedExhaustsRnrRetries", null, NO_RNR),
            new Deviation("ErrorOutcomeConformanceTest", "responderErrorFlushesTheResponderReceives", null,
                    LOCAL_COMPLETION),
            new Deviation("ErrorOutcomeConformanceTest", "gatherFromFreedMemoryCompletesWithLocProtErrAtOnce", null,
                    "closing the arena deregistered the region, so the gather names a bad lkey: " + BAD_LKEY_GATHER),
            new Deviation("ErrorOutcomeConformanceTest", "remoteMemoryFreedUnderItsRegistrationIsARemoteAccessErrorAtOnce",
                    null, "closing the arena deregistered the region, so the peer names a bad STag, which siw does"
                            + " not report as REM_ACCESS_ERR: " + LOCAL_COMPLETION + "; a READ ends the connection"
                            + " with a TERMINATE (WR_FLUSH_ERR)"),
            new Deviation("SignalingAndFenceConformanceTest", "anUnsignaledRequestThatFailsStillCompletes", null,
                    LOCAL_COMPLETION),
            new Deviation("SendQueueDrainConformanceTest", "leavingSqdWhileTheSendQueueIsStillDrainingFailsEinval", null,
                    "it keeps the send queue busy with a SEND the peer has no receive for: " + NO_RNR),
            new Deviation("SendQueueDrainConformanceTest", "sqdWithNotifyRaisesSqDrainedAfterOutstandingWorkCompletes",
                    null, "siw has no SQD state: a modify to SQD raises no SQ_DRAINED event"),
            new Deviation("PostingConformanceTest", null, UC_UD, RC_ONLY),
            new Deviation("PostingConformanceTest", "moreSendWorkRequestsThanMaxFailsEnomem", null,
                    "the send queue never fills: " + LOCAL_COMPLETION),
            new Deviation("PostingConformanceTest", "postRecvInResetFailsEinval", null,
                    "libsiw's ibv_post_recv accepts a receive on a QP in RESET"),
            new Deviation("PostingConformanceTest", "postSendBeforeRtsFailsEinval", null,
                    "siw refuses a send before RTS with EPERM, not EINVAL"),
            new Deviation("SharedReceiveQueueConformanceTest", "resizeWorksUpToMaxAndKeepsPostedReceives", null,
                    "siw cannot resize an SRQ: ibv_modify_srq of max_wr is EOPNOTSUPP"),
            new Deviation("SharedReceiveQueueConformanceTest", "createdSrqReportsAtLeastTheRequest", null, NO_QUERY_SRQ),
            new Deviation("SharedReceiveQueueConformanceTest", "limitAboveDeviceMaxFailsEinval", null, NO_QUERY_SRQ),
            new Deviation("SharedReceiveQueueConformanceTest", "limitFiresOnceWhenFewerThanLimitRemainAndDisarms", null, NO_QUERY_SRQ),
            new Deviation("SharedReceiveQueueConformanceTest", "moreReceivesThanMaxFailsEnomem", null, NO_QUERY_SRQ),
            new Deviation("SharedReceiveQueueConformanceTest", "moreSgesThanMaxFailsEinval", null, NO_QUERY_SRQ),
            new Deviation("SharedReceiveQueueConformanceTest", "resizeBelowTheArmedLimitOrLimitAboveMaxWrFailsEinval", null, NO_QUERY_SRQ),
            new Deviation("SharedReceiveQueueConformanceTest", "srqWithMaxSgeZeroGetsOneScatterEntry", null, NO_QUERY_SRQ),
            new Deviation("MemoryRegionConformanceTest", "deregWhileAReceiveNamesItSucceedsAndTheReceiveFailsLikeABadLkey",
                    null, LOCAL_COMPLETION),
            new Deviation("MemoryRegionConformanceTest", "deregWhileASendNamesItSucceedsAndTheSendCompletesWithLocProtErr",
                    null, "siw completes a SEND or WRITE whose gather list fails the local key check with LOC_QP_OP_ERR,"
                            + " not LOC_PROT_ERR"),
            new Deviation("MemoryRegionConformanceTest", "aBindRacingTheDeallocOfItsWindowNeverLeavesTheMrBusy", null,
                    NO_MW),
            new Deviation("MemoryRegionConformanceTest", "reregWithANewTranslationWhileAWindowIsBoundIsRefusedEbusy",
                    null, NO_MW),
            new Deviation("MemoryRegionConformanceTest", "deregWithBoundType2WindowIsRefusedEbusy", null, NO_MW),
            new Deviation("LifetimeConformanceTest", "mrCanBeDeregisteredOnceItsWindowIsDeallocated", null, NO_MW),
            new Deviation("CompletionQueueConformanceTest", "resizeBelowQueuedCompletionsFailsEinvalAndLosesNothing",
                    null, "siw has no resize_cq: ibv_resize_cq is EOPNOTSUPP"),
            new Deviation("CompletionQueueConformanceTest", "resizeUpKeepsQueuedCompletionsInOrder", null,
                    "siw has no resize_cq: ibv_resize_cq is EOPNOTSUPP"),
            // --- the control-path suites
            new Deviation("QueuePairStateConformanceTest", null, UC_UD, RC_ONLY),
            new Deviation("QueuePairTransitionConformanceTest", null, UC_UD, RC_ONLY),
            new Deviation("QueuePairStateConformanceTest", "udQkeyReadsBack", null, RC_ONLY),
            new Deviation("QueuePairTransitionConformanceTest", "moveToResetOrErrWithAnyOtherBitFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "maxDestRdAtomic12ReadsBackAtLeast12", null, QP_STATE),
            new Deviation("QueuePairTransitionConformanceTest", "requiredMasksBringQpToRts", null, QP_STATE),
            new Deviation("QueuePairTransitionConformanceTest", "missingRequiredBitFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "maxDestRdAtomicAboveDeviceMaxFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "maxRdAtomicAboveDeviceMaxFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "attributesBeyondTheirFieldsFailEinvalOnEveryProvider", null,
                    QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "curQpStateOtherThanTheQpsStateFailsEinval", null, QP_STATE),
            new Deviation("QueuePairTransitionConformanceTest", "anyStateMayMoveToResetOrErr", null, QP_STATE),
            new Deviation("QueuePairTransitionConformanceTest", "extraBitFailsEinval", null, QP_STATE),
            new Deviation("QueuePairTransitionConformanceTest", "optionalBitsAreAccepted", null, QP_STATE),
            new Deviation("QueuePairTransitionConformanceTest", "transitionOutsideTheTableFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "rtrWithoutGrhFailsEinvalOnRoce", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "pathMtuAbovePortMaxFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "stateQueryAgreesWithState", null, RTS_BY_CM),
            new Deviation("QueuePairStateConformanceTest", "queryReturnsTheConnectedAttributes", null, RTS_BY_CM),
            new Deviation("QueuePairStateConformanceTest", "queryReturnsTheInitAttributes", null,
                    "siw's query_qp does not report sq_sig_all (it keeps it as a flag of its own)"),
            new Deviation("QueuePairStateConformanceTest", "qpNumbersAreDistinct24BitAndNotReserved", null,
                    "siw numbers QPs from 1: iWARP has no special QPs 0 and 1 (no SMI, no GSI)"),
            new Deviation("DeviceConformanceTest", "addressHandleWithoutGrhFailsEinvalOnRoce", null, NO_AH),
            new Deviation("DeviceConformanceTest", "addressHandleWithGrhIsCreated", null, NO_AH),
            new Deviation("DeviceConformanceTest", "addressHandleWithSgidIndexBeyondTableFailsEinval", null, NO_AH),
            new Deviation("DeviceConformanceTest", "connectionGidIsANonEmptyRoceV2Entry", null,
                    "an iWARP GID is the net device's MAC address in the first six bytes, of type IB: there is no"
                            + " RoCE v2 entry (rdma_cm finds the device by the IP address's net device)"),
            new Deviation("DeviceConformanceTest", "deviceLimitIsPositive", Pattern.compile("max_(mw|ah|pkeys)"),
                    "siw reports max_mw, max_ah and max_pkeys 0: iWARP has no memory windows in siw, no address"
                            + " handles and no P_Keys"),
            new Deviation("DeviceConformanceTest", "port1IsActiveRoce", null, NO_PKEY),
            new Deviation("DeviceConformanceTest", "pkeyIndexZeroIsDefaultPkey", null, NO_PKEY),
            new Deviation("ProtectionDomainConformanceTest", "deallocWhileInUseFailsEbusy", AH, NO_AH),
            new Deviation("ProtectionDomainConformanceTest", "deallocWhileInUseFailsEbusy", MW, NO_MW),
            new Deviation("ProtectionDomainConformanceTest", "pdStillWorksAfterRefusedDealloc", null,
                    "each case pins the PD with a memory window (or an AH), which siw does not have: " + NO_MW),
            new Deviation("ResourceLimitsConformanceTest", "onePastTheAdvertisedMaximumFailsAndLeavesNothingBehind", AH,
                    NO_AH),
            new Deviation("ResourceLimitsConformanceTest", "onePastTheAdvertisedMaximumFailsAndLeavesNothingBehind", MW,
                    NO_MW),
            new Deviation("CompletionQueueConformanceTest", "resizeUpToMaxWorksAndAboveFailsEinval", null,
                    "siw has no resize_cq: ibv_resize_cq is EOPNOTSUPP"),
            new Deviation("CompletionQueueConformanceTest", "resizeGivesAtLeastTheRequest", null,
                    "siw has no resize_cq: ibv_resize_cq is EOPNOTSUPP"),
            new Deviation("EventPollerConformanceTest", "eachSourceWakesThePollerAndIsReportedPrecisely", null,
                    "its async-event half waits for QP_LAST_WQE_REACHED, which siw never raises (a QP on an SRQ"
                            + " that goes to ERR)"),
            new Deviation("AsyncEventConformanceTest", "lastWqeReachedOfADestroyedQpIsNotDelivered", null,
                    "siw never raises QP_LAST_WQE_REACHED (a QP on an SRQ that goes to ERR)"),
            new Deviation("AsyncEventConformanceTest", "eventsAreDeliveredInOrderAndOnlyOnce", null,
                    "siw never raises QP_LAST_WQE_REACHED (a QP on an SRQ that goes to ERR)"),
            new Deviation("AsyncEventConformanceTest", "srqLimitOfADestroyedSrqIsNotDeliveredAndOtherDestroysKeepIt", null,
                    "it sends on a QP connected to itself by modify_qp: " + RTS_BY_CM),
            new Deviation("AsyncEventConformanceTest", "qpWithAnUnacknowledgedEventRefusesToCloseUntilItIsAcknowledged",
                    null, "siw never raises QP_LAST_WQE_REACHED (a QP on an SRQ that goes to ERR)"),
            new Deviation("AsyncEventConformanceTest", "srqWithAnUnacknowledgedLimitEventRefusesToCloseUntilItIsAcknowledged",
                    null, "it sends on a QP connected to itself by modify_qp: " + RTS_BY_CM),
            new Deviation("LifetimeConformanceTest", "closeIsIdempotent", MW, NO_MW),
            new Deviation("LifetimeConformanceTest", "closeIsIdempotent", AH, NO_AH),
            new Deviation("LifetimeConformanceTest", "closedObjectRefusesUseWithIllegalStateException", MW, NO_MW),
            new Deviation("LifetimeConformanceTest", "closedObjectRefusesUseWithIllegalStateException", AH, NO_AH),
            new Deviation("LifetimeConformanceTest", "createRacingTheCloseOfItsParentEitherWinsOrLeavesNothing", MW,
                    NO_MW));

    /** Why the test differs on siw, or null. */
    static String why(String suite, String method, String display) {
        for (Deviation d : ALL) {
            if (d.matches(suite, method, display)) {
                return "Linux 6.1 siw: " + d.why();
            }
        }
        return null;
    }
}
