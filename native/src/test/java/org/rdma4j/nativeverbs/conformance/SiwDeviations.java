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
    private static final String NO_PKEY = "iWARP has no P_Keys: siw's pkey_tbl_len and max_pkeys are 0, and"
            + " libibverbs' ibv_query_pkey of index 0 is ENOENT (no sysfs entry)";
    private static final String QP_STATE = "siw's query_qp reports no QP state (qp_state stays 0, RESET, whatever"
            + " the QP's state), and its modify_qp looks only at the state and the access flags: no EINVAL for a"
            + " missing or extra IB attribute; RTS needs the connection manager's TCP stream";
    private static final String RTS_BY_CM = "an iWARP RC QP reaches RTS only through the connection manager: siw's"
            + " modify_qp to RTS without its TCP stream is EINVAL";

    static final List<Deviation> ALL = List.of(
            new Deviation("QueuePairStateConformanceTest", null, UC_UD, RC_ONLY),
            new Deviation("QueuePairStateConformanceTest", "udQkeyReadsBack", null, RC_ONLY),
            new Deviation("QueuePairStateConformanceTest", "moveToResetOrErrWithAnyOtherBitFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "maxDestRdAtomic12ReadsBackAtLeast12", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "requiredMasksBringQpToRts", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "missingRequiredBitFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "maxDestRdAtomicAboveDeviceMaxFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "maxRdAtomicAboveDeviceMaxFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "anyStateMayMoveToResetOrErr", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "extraBitFailsEinval", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "optionalBitsAreAccepted", null, QP_STATE),
            new Deviation("QueuePairStateConformanceTest", "transitionOutsideTheTableFailsEinval", null, QP_STATE),
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
            new Deviation("DeviceConformanceTest", "queryPkeyOutOfRangeFailsEinval", null, NO_PKEY),
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
