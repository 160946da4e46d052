// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PortState;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * A port losing and regaining its link (rxe: the netdev's carrier): PORT_ERR and PORT_ACTIVE on every
 * open context, the port state {@code ibv_query_port} shows, and RC traffic across the outage. The
 * device under test is one this suite alone uses ({@link ConformanceSetup#openIsolated()}): it goes down.
 */
@Rule({"S-PORT-1", "S-PORT-2"})
@Requires(value = Capability.PORT_STATE_CONTROL, why = "the setup cannot take a port down")
public class PortStateConformanceTest extends AbstractVerbsTest {
    @Override
    protected Context openContext() {
        return setup.openIsolated();
    }

    @Override
    protected Context openPeerContext() {
        return setup.openIsolatedPeer();
    }

    /** Takes port 1 of {@code c}'s device down or brings it up (e.g. the netdev's carrier). */
    private void setPortUp(Context c, boolean up) {
        setup.setPortUp(c, up);
    }

    @AfterEach
    void portBackUp() {
        if (ctx != null && !ctx.isClosed()) {
            setPortUp(ctx, true);
        }
    }

    @Rule("S-PORT-1")
    @Test
    void portDownAndUpRaisePortErrAndPortActiveOnEveryOpenContext() throws Exception {
        Context second = openContext();
        try {
            setPortUp(ctx, false);
            for (Context c : new Context[] {ctx, second}) {
                AsyncEvent e = awaitAsyncEvent(c, AsyncEventType.PORT_ERR);
                assertEquals(1, e.portNum());
                assertEquals(PortState.DOWN, c.queryPort(1).state());
            }
            setPortUp(ctx, true);
            for (Context c : new Context[] {ctx, second}) {
                AsyncEvent e = awaitAsyncEvent(c, AsyncEventType.PORT_ACTIVE);
                assertEquals(1, e.portNum());
                assertEquals(PortState.ACTIVE, c.queryPort(1).state());
            }
        } finally {
            second.close();
        }
    }

    @Rule("S-PORT-2")
    @Test
    void rcSendAcrossAShortOutageIsRecoveredByRetransmission() throws Exception {
        // 8 tries x 268 ms (timeout 16) is a budget of about 2 s; the port is down for about 300 ms.
        QpPair p = connect(spec(QpType.RC).timeout(16).retryCnt(7));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 1000, 7);
        postRecv(p.b(), 10, dst, 0, 1000);
        setPortUp(ctx, false);
        awaitAsyncEvent(ctx, AsyncEventType.PORT_ERR);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 1000)); // posting still works
        assertNoCompletion(p.a().sendCq(), 300, "nothing gets through while the port is down");
        setPortUp(ctx, true);
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
        expect(p.b().recvCq(), 10, WcOpcode.RECV);
        assertPattern(dst.segment(), 0, 1000, 7, "received after the port came back");
        assertQpState(p.a().qp(), QpState.RTS);
    }

    @Rule("S-PORT-2")
    @Test
    void rcSendFromADownPortEndsInRetryExcErr() throws Exception {
        QpPair p = connect(spec(QpType.RC).timeout(12).retryCnt(2));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        postRecv(p.b(), 10, dst, 0, 64);
        setPortUp(ctx, false);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 64));
        expect(p.a().sendCq(), 1, WcStatus.RETRY_EXC_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertNoCompletion(p.b().recvCq(), "the receiver never saw the message");
    }

    @Rule("S-PORT-2")
    @Test
    void rcSendToADownPortEndsInRetryExcErr() throws Exception {
        QpPair p = connect(spec(QpType.RC).timeout(12).retryCnt(2));
        MemoryRegion src = register(p.b(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.a(), PAGE_SIZE, MR_ALL);
        postRecv(p.a(), 10, dst, 0, 64);
        setPortUp(ctx, false);
        p.b().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 64));
        expect(p.b().sendCq(), 1, WcStatus.RETRY_EXC_ERR);
        assertNoCompletion(p.a().recvCq(), "a down port receives nothing");
    }
}
