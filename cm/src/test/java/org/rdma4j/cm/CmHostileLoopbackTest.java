// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.CmMra;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.CmReq;
import org.rdma4j.cm.wire.CmaHeader;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * Three soft UDP devices on loopback (127.0.0.91, .92, .93), the CM on their real QP1s. A and B hold a
 * connection; a hostile program on the third address opens QP1 of its own device, sends one REQ to
 * B's listener, reads the MRA that answers it at once (B's communication ID for that request), then
 * sends B 64 REJs with the IDs around it (what a sequential or XORed counter would have given the
 * connection before it) and, as if it knew every ID, QPN and CA GUID of the live connection, a REJ,
 * timeout REJ, DREQ, DREP, RTU, MRA and LAP to each side. The connection does not notice: no event,
 * every forgery counted in {@link CmId#droppedMessages()}, data keeps moving both ways.
 */
class CmHostileLoopbackTest extends CmTestSupport {
    private static Device evil;

    @BeforeAll
    static void devices() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.91");
        InetAddress b = InetAddress.getByName("127.0.0.92");
        InetAddress e = InetAddress.getByName("127.0.0.93");
        int udp = SoftDevices.freeUdpPort(27_300, a, b, e);
        setUpDevices("soft:udp?name=cmhA&addr=127.0.0.91&port=" + udp,
                "soft:udp?name=cmhB&addr=127.0.0.92&port=" + udp);
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER; // the real QP1s: the hostile party is a real sender
        evil = Verbs.createDevice("soft:udp?name=cmhE&addr=127.0.0.93&port=" + udp);
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
        Verbs.removeDevice(evil);
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    @Test
    void forgedRejsAndOthersFromAnotherAddressLeaveALiveConnectionUp() throws Exception {
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP);
             Context ectx = evil.open(); Arena arena = Arena.ofConfined()) {
            listen(listener, ipB, port, 8); // B's address only: the hostile device's QP1 stays its own
            resolve(client, cch, ipB, port);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            CmId child = expect(sch, CmEventType.CONNECT_REQUEST).id();
            Ep se = new Ep(child);
            child.accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            CmForgedMessageTest.sendBothWays(ce, se);

            GsiPort qp1 = GsiOpener.PROVIDER.open(ectx, 1, 1);
            try {
                Gid me = qp1.localGid();
                MemorySegment mad = arena.allocate(GsiPort.MAD_SIZE);
                sendReq(qp1, mad, me, port);
                CmEvent theirs = expect(sch, CmEventType.CONNECT_REQUEST);
                int leaked = awaitMra(qp1, mad);
                theirs.id().reject(null);
                theirs.id().close();

                List<byte[]> toB = new ArrayList<>();
                for (int k = 1; k <= 32; k++) {
                    toB.add(CmForgery.rej(ThreadLocalRandom.current().nextInt(), leaked - k, CmRej.MSG_REP,
                            CmRej.REASON_CONSUMER_DEFINED, 0));
                    toB.add(CmForgery.rej(ThreadLocalRandom.current().nextInt(), leaked + k, CmRej.MSG_REP,
                            CmRej.REASON_CONSUMER_DEFINED, 0));
                }
                int c = client.conn.localCommId;
                int s = child.conn.localCommId;
                toB.addAll(everything(c, s, se.qp.qpn(), client.conn.caGuid));
                List<byte[]> toA = everything(s, c, ce.qp.qpn(), child.conn.caGuid);
                long dropped = CmForgery.dropped();
                for (byte[] m : toB) {
                    send(qp1, mad, m, gidB);
                }
                for (byte[] m : toA) {
                    send(qp1, mad, m, gidA);
                }
                long want = toA.size() + toB.size();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
                while (CmForgery.dropped() - dropped < want) {
                    assertTrue(System.nanoTime() - deadline < 0, () -> "dropped " + (CmForgery.dropped() - dropped)
                            + " of " + want + " forged messages");
                    Thread.sleep(1);
                }
                assertEquals(want, CmForgery.dropped() - dropped);
            } finally {
                qp1.close();
            }
            assertNull(sch.getEvent(0, TimeUnit.SECONDS), "no event on the server");
            assertNull(cch.getEvent(0, TimeUnit.SECONDS), "no event on the client");
            CmForgedMessageTest.sendBothWays(ce, se);

            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            child.disconnect();
            assertEquals(0, expect(cch, CmEventType.DISCONNECTED).status());
            ce.close();
            se.close();
            child.close();
        }
    }

    /** What a party that knew every ID, QPN and CA GUID would send: one of each kind that could hurt. */
    private static List<byte[]> everything(int peerId, int victimId, int victimQpn, long peerGuid) {
        return List.of(CmForgery.rej(peerId, victimId, CmRej.MSG_OTHER, CmRej.REASON_CONSUMER_DEFINED, 0),
                CmForgery.rej(peerId, victimId, CmRej.MSG_OTHER, CmRej.REASON_TIMEOUT, peerGuid),
                CmForgery.dreq(peerId, victimId, victimQpn), CmForgery.drep(peerId, victimId),
                CmForgery.rtu(peerId, victimId), CmForgery.mra(peerId, victimId, CmMra.MSG_REP),
                CmForgery.lap(peerId, victimId));
    }

    private static void send(GsiPort qp1, MemorySegment mad, byte[] m, Gid to) {
        MemorySegment.copy(m, 0, mad, ValueLayout.JAVA_BYTE, 0, m.length);
        qp1.send(mad, to, 0xFFFF);
    }

    /** A well-formed REQ for rdma_cm's TCP port space from the hostile device to B's listener. */
    private static void sendReq(GsiPort qp1, MemorySegment mad, Gid me, int port) {
        CmReq req = new CmReq();
        req.wrap(mad).clearAndInit(ThreadLocalRandom.current().nextLong());
        req.localCommId(0x5EED).serviceId(PortSpace.TCP.serviceId(port)).localQpn(0x123).startingPsn(1)
                .remoteCmResponseTimeout(12).localCmResponseTimeout(12).transportServiceType(CmReq.TRANSPORT_RC)
                .pathMtu(3).maxCmRetries(2).retryCount(7).rnrRetryCount(7).pkey(0xFFFF)
                .primaryLocalLid(0xFFFF).primaryRemoteLid(0xFFFF).primaryLocalGidSet(me.bytes())
                .primaryRemoteGidSet(gidB.bytes()).primaryHopLimit(64).primaryLocalAckTimeout(14);
        CmaHeader.write(mad, CmReq.PRIVATE_DATA_OFFSET, me.toInetAddress(), 4242, ipB);
        qp1.send(mad, gidB, 0xFFFF);
    }

    /** {@return B's communication ID for the hostile request, from the MRA that answers it} */
    private static int awaitMra(GsiPort qp1, MemorySegment mad) {
        GsiPort.Source from = new GsiPort.Source();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (System.nanoTime() - deadline < 0) {
            if (qp1.receive(mad, from, TimeUnit.MILLISECONDS.toNanos(100))
                    && MadHeader.attributeId(mad) == MadHeader.ATTR_MRA) {
                CmMra mra = new CmMra();
                mra.wrap(mad);
                assertEquals(0x5EED, mra.remoteCommId());
                assertNotEquals(0, mra.localCommId());
                return mra.localCommId();
            }
        }
        throw new AssertionError("no MRA for the hostile REQ within " + WAIT_S + " s");
    }
}
