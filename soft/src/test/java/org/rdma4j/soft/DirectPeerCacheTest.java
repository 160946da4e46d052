// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.QpEngine;
import org.rdma4j.verbs.*;

/**
 * The requester keeps the connected QP it found in the peer device's table (QpEngine.directPeer) and
 * uses it again for the next WRITE: a destroyed peer must never be served from that cache, a QP that
 * got the destroyed one's number must be found, and a peer moved to ERR must not be written.
 */
class DirectPeerCacheTest {
    private static QpEngine engine(QueuePair q) {
        return ((SoftQp) q).engine;
    }

    @Test
    void aDestroyedPeerIsNotServedFromTheCacheAndAReusedNumberFindsTheNewQp() {
        InProcessPair.with("peer-cache", new QpCap(8, 4, 1, 1, 64), new QpCap(8, 4, 1, 1, 0), p -> {
            QpEngine a = engine(p.qa());
            assertSame(engine(p.qb()), a.directPeerNow(), "the connected QP, now cached");

            int qpn = p.qb().qpn();
            ProtectionDomain pdB = p.mb().pd();
            CompletionQueue cqB = p.cb();
            p.qb().close();
            assertNull(a.directPeerNow(), "a destroyed peer is looked up again, and gone");

            ((SoftContext) p.b()).hca.nextQpnHint(qpn);
            try (QueuePair again = pdB.createQp(new QpInitAttr(QpType.RC, cqB, cqB).cap(new QpCap(8, 4, 1, 1, 0)))) {
                assertEquals(qpn, again.qpn(), "the new QP has the destroyed one's number");
                ReceivePathFuzzTest.Connect.bringUp(again, QpType.RC, p.a().queryGid(1, 1), p.qa().qpn());
                assertSame(engine(again), a.directPeerNow(), "the QP now holding the number, not the destroyed one");

                // the WRITE lands in the new QP's device (A's next PSN is 0: nothing was sent yet)
                p.src().set(ValueLayout.JAVA_LONG, 0, 0x1111L);
                p.qa().postSend(write(p, 1));
                WorkCompletion c = ReceivePathFuzzTest.Connect.poll(p.ca());
                assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
                assertEquals(0x1111L, p.dst().get(ValueLayout.JAVA_LONG, 0));

                // a state change of the cached peer is honoured: a peer in ERR executes nothing
                again.modify(new QpAttr().state(QpState.ERR), QpAttrMask.STATE);
                assertSame(engine(again), a.directPeerNow(), "still the connected QP");
                p.src().set(ValueLayout.JAVA_LONG, 0, 0x2222L);
                p.qa().postSend(write(p, 2));
                assertEquals(0x1111L, p.dst().get(ValueLayout.JAVA_LONG, 0), "a peer in ERR is not written");
                c = ReceivePathFuzzTest.Connect.poll(p.ca());
                assertEquals(WcStatus.RETRY_EXC_ERR, c.status(), c.toString());
                assertEquals(0x1111L, p.dst().get(ValueLayout.JAVA_LONG, 0), "nor written later");
            }
        });
    }

    private static SendWorkRequest write(InProcessPair p, long wrId) {
        return new SendWorkRequest().wrId(wrId).flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(p.ma(), 0, 8)
                .write(p.mb().address(), p.mb().rkey());
    }
}
