// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * SEMANTICS.md, Control path, "Limits": every advertised max_* is enforced, one past it fails (rxe:
 * EINVAL from its object pools; a hardware HCA may say ENOMEM), and the failed create leaves nothing
 * behind: after closing one object, one more can be made, and then no more. A limit above
 * {@link #REACHABLE} is skipped (too many objects for a unit test); a setup with
 * {@link Capability#SMALL_LIMITS} runs every kind again on a device where each limit is reachable.
 */
@Rule("S-LIM-1")
public class ResourceLimitsConformanceTest extends AbstractVerbsTest {
    /** The most objects of one kind a test creates. */
    protected static final int REACHABLE = 0x8000;

    /** The limited kinds of object, as named in ibv_device_attr. */
    public enum Kind { PD, CQ, QP, SRQ, MR, MW, AH }

    /** The device whose limits are tested. */
    private Context dev;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private MemorySegment memory;

    private static int max(DeviceAttr a, Kind k) {
        return switch (k) {
            case PD -> a.maxPd();
            case CQ -> a.maxCq();
            case QP -> a.maxQp();
            case SRQ -> a.maxSrq();
            case MR -> a.maxMr();
            case MW -> a.maxMw();
            case AH -> a.maxAh();
        };
    }

    private VerbsResource create(Kind k) {
        return switch (k) {
            case PD -> dev.allocPd();
            case CQ -> dev.createCq(1);
            case QP -> pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(1, 1, 1, 1, 0)));
            case SRQ -> pd.createSrq(new SrqAttr(1, 1, 0));
            case MR -> pd.regMr(memory, MR_ALL);
            case MW -> pd.allocMw(MwType.TYPE_2);
            case AH -> pd.createAh(AhAttr.roce(dev.queryGid(1, gidIndex(dev)), gidIndex(dev)));
        };
    }

    private static void assertLimitErrno(VerbsException e) {
        assertTrue(e.errno() == Errno.EINVAL || e.errno() == Errno.ENOMEM,
                () -> "one past the limit: EINVAL (rxe) or ENOMEM, got " + Errno.name(e.errno()) + ": " + e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void onePastTheAdvertisedMaximumFailsAndLeavesNothingBehind(Kind kind) {
        check(ctx, kind);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    @Requires(value = Capability.SMALL_LIMITS, why = "no device whose every limit is reachable")
    void onePastTheMaximumOfASmallLimitsDeviceFailsAndLeavesNothingBehind(Kind kind) {
        check(track(setup.openSmallLimits()), kind);
    }

    private void check(Context device, Kind kind) {
        dev = device;
        int max = max(dev.queryDevice(), kind);
        assumeTrue(max <= REACHABLE, () -> "max_" + kind.name().toLowerCase() + " " + max
                + " is too many objects for a test");
        if (kind != Kind.PD) {
            pd = allocPd(dev);
        }
        if (kind == Kind.QP) {
            cq = createCq(dev, 1);
        }
        memory = allocate(PAGE_SIZE);
        List<VerbsResource> made = new ArrayList<>();
        try {
            VerbsException refused = null;
            // Other objects of this kind may exist on the device already: at most max are made.
            while (made.size() <= max && refused == null) {
                try {
                    made.add(create(kind));
                } catch (VerbsException e) {
                    refused = e;
                }
            }
            int n = made.size();
            assertNotNull(refused, () -> n + " " + kind + "s created, max_" + kind.name().toLowerCase() + " is " + max);
            assertTrue(n <= max, () -> n + " " + kind + "s created, max is " + max);
            assertLimitErrno(refused);
            // The refused create took nothing: one closed, one fits again, and then none.
            made.remove(made.size() - 1).close();
            made.add(create(kind));
            assertLimitErrno(assertThrows(VerbsException.class, () -> made.add(create(kind)),
                    "one past the limit again"));
        } finally {
            for (int i = made.size() - 1; i >= 0; i--) {
                made.get(i).close();
            }
        }
    }
}
