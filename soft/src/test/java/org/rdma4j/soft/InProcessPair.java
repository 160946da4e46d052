// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.UnaryOperator;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.*;

/**
 * Two soft devices on an in-process fabric with one connected RC pair (MTU 1024, retry and RNR retry
 * 7), a CQ each, and a 4 KiB registered buffer each (A's {@code src}, B's {@code dst}): the set-up of
 * the direct-path tests. Everything is closed and the devices removed after the body.
 */
record InProcessPair(Context a, Context b, QueuePair qa, QueuePair qb, CompletionQueue ca, CompletionQueue cb,
                     MemoryRegion ma, MemoryRegion mb, MemorySegment src, MemorySegment dst) {
    private static final int ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    interface Body {
        void run(InProcessPair p) throws Exception;
    }

    static void with(String name, QpCap capA, QpCap capB, Body body) {
        with(name, capA, capB, null, 7, body);
    }

    /**
     * As above, each device's link wrapped by {@code linkWrapper} (null: none), A's RNR retry count
     * {@code rnrRetryA} (0: a SEND that meets no receive fails at once).
     */
    static void with(String name, QpCap capA, QpCap capB, UnaryOperator<Link> linkWrapper, int rnrRetryA,
                     Body body) {
        LoopbackFabric fabric = new LoopbackFabric();
        Device da = SoftDevices.createLoopback(name + "-a", fabric, linkWrapper);
        Device db = SoftDevices.createLoopback(name + "-b", fabric, linkWrapper);
        boolean ok = false;
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(64);
            CompletionQueue cb = b.createCq(64);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(capA));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(capB));
            ReceivePathFuzzTest.Connect.bringUp(qa, QpType.RC, b.queryGid(1, 1), qb.qpn(), 7, rnrRetryA); // MTU 1024
            ReceivePathFuzzTest.Connect.bringUp(qb, QpType.RC, a.queryGid(1, 1), qa.qpn());
            MemorySegment src = arena.allocate(4096, 8);
            MemorySegment dst = arena.allocate(4096, 8);
            MemoryRegion ma = pa.regMr(src, ALL);
            MemoryRegion mb = pb.regMr(dst, ALL);
            body.run(new InProcessPair(a, b, qa, qb, ca, cb, ma, mb, src, dst));
            for (AutoCloseable c : new AutoCloseable[] {qa, qb, ma, mb, ca, cb, pa, pb}) {
                c.close();
            }
            ok = true;
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            if (ok) {
                SoftDevices.remove(db);
                SoftDevices.remove(da);
            }
        }
    }
}
