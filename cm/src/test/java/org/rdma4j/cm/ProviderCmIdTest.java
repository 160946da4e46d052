// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.CmProvider;

/**
 * A {@link CmId} on a provider's own connection manager ({@link ProviderCmId}), with a recording stand-in
 * for the provider: calls reach it as given, its events arrive on the channel one to one, and a
 * CONNECT_REQUEST brings a new id that is itself on the provider.
 */
class ProviderCmIdTest {
    /** Records every call; its events are fired by the test through {@link #listener}. */
    static class FakeId implements CmProvider.Id {
        final List<String> calls = new ArrayList<>();
        CmProvider.Listener listener;
        CmProvider.Param param;
        byte[] rejected;
        boolean closed;
        final InetSocketAddress local;

        FakeId(CmProvider.Listener listener, InetSocketAddress local) {
            this.listener = listener;
            this.local = local;
        }

        @Override
        public void listener(CmProvider.Listener l) {
            listener = l;
        }

        @Override
        public void bindAddr(InetSocketAddress addr) {
            calls.add("bind " + addr.getPort());
        }

        @Override
        public void resolveAddr(InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
            calls.add("resolveAddr " + dst.getPort() + " " + timeoutMs);
        }

        @Override
        public void resolveRoute(int timeoutMs) {
            calls.add("resolveRoute " + timeoutMs);
        }

        @Override
        public void listen(int backlog) {
            calls.add("listen " + backlog);
        }

        @Override
        public QueuePair createQp(ProtectionDomain pd, QpInitAttr attr) {
            calls.add("createQp");
            throw new VerbsException(Errno.ENOMEM, "no QP in the stand-in");
        }

        @Override
        public void destroyQp() {
            calls.add("destroyQp");
        }

        @Override
        public void connect(CmProvider.Param p) {
            calls.add("connect");
            param = p;
        }

        @Override
        public void accept(CmProvider.Param p) {
            calls.add("accept");
            param = p;
        }

        @Override
        public void reject(byte[] privateData) {
            calls.add("reject");
            rejected = privateData;
        }

        @Override
        public void establish() {
            calls.add("establish");
        }

        @Override
        public org.rdma4j.verbs.QpAttr initQpAttr(org.rdma4j.verbs.QpState state) {
            calls.add("initQpAttr " + state);
            return new org.rdma4j.verbs.QpAttr().state(state);
        }

        @Override
        public void disconnect() {
            calls.add("disconnect");
        }

        @Override
        public void setAckTimeout(int exponent) {
            calls.add("ackTimeout " + exponent);
        }

        @Override
        public void joinMulticast(InetAddress group, boolean sendOnly, Object context) {
            calls.add("join " + group.getHostAddress() + (sendOnly ? " send-only" : ""));
        }

        @Override
        public void leaveMulticast(InetAddress group) {
            calls.add("leave " + group.getHostAddress());
        }

        @Override
        public Context context() {
            return null;
        }

        @Override
        public int portNum() {
            return 1;
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public InetSocketAddress remoteAddress() {
            return null;
        }

        @Override
        public Gid sourceGid() {
            return local == null ? null : Gid.of(local.getAddress());
        }

        @Override
        public Gid destinationGid() {
            return null;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    static class FakeProvider implements CmProvider {
        final List<FakeId> made = new ArrayList<>();
        int lastPortSpace;

        @Override
        public Id createId(int portSpace, Listener listener) {
            lastPortSpace = portSpace;
            FakeId id = new FakeId(listener, new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000 + made.size()));
            made.add(id);
            return id;
        }
    }

    private static CmEvent next(CmEventChannel ch) throws InterruptedException {
        CmEvent e = ch.getEvent(0, TimeUnit.SECONDS); // the fake delivers synchronously: it is there already
        assertNotNull(e, "no event");
        return e;
    }

    @Test
    void callsGoToTheProviderAndItsEventsArriveOneToOne() throws Exception {
        FakeProvider provider = new FakeProvider();
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.setAckTimeout(18); // set before the provider was chosen: passed on when it is
            ProviderCmId p = ProviderCmId.attach(id, provider);
            assertNotNull(p);
            assertEquals(0x0106, provider.lastPortSpace);
            FakeId f = provider.made.get(0);
            assertEquals(List.of("ackTimeout 18"), f.calls);

            id.resolveAddr(null, new InetSocketAddress(InetAddress.getLoopbackAddress(), 7174), 1500);
            f.listener.onEvent(new CmProvider.Event(0, 0, f, null, new byte[0], null));
            CmEvent e = next(ch);
            assertEquals(CmEventType.ADDR_RESOLVED, e.type());
            assertSame(id, e.id());
            e.ack();
            id.resolveRoute(900);
            id.connect(new ConnParam().privateData(new byte[] {9, 8}).retryCount(5).initiatorDepth(3));
            assertEquals(List.of("ackTimeout 18", "resolveAddr 7174 1500", "resolveRoute 900", "connect"), f.calls);
            assertArrayEquals(new byte[] {9, 8}, f.param.privateData());
            assertEquals(5, f.param.retryCount());
            assertEquals(3, f.param.initiatorDepth());

            // REJECTED with the REJ reason as status and the peer's private data, as rdma_cm reports them
            f.listener.onEvent(new CmProvider.Event(8, 28, f, null, new byte[] {1, 2, 3}, null));
            e = next(ch);
            assertEquals(CmEventType.REJECTED, e.type());
            assertEquals(28, e.status());
            assertArrayEquals(new byte[] {1, 2, 3}, e.privateData());
            e.ack();

            // what the id reports is the provider id's
            assertEquals(7000, id.localAddress().getPort());
            assertEquals(1, id.portNum());
            assertNull(id.context());
            assertEquals(Gid.of(InetAddress.getLoopbackAddress()), id.sourceGid());

            // checked before the provider sees them
            VerbsException big = assertThrows(VerbsException.class,
                    () -> id.connect(new ConnParam().privateData(new byte[ConnParam.MAX_REQ_PRIVATE_DATA + 1])));
            assertEquals(Errno.EINVAL, big.errno());
            VerbsException type = assertThrows(VerbsException.class, () -> id.createQp(unusedPd(), new QpInitAttr(
                    QpType.UD, null, null)));
            assertEquals(Errno.EINVAL, type.errno());
            assertEquals(4, f.calls.size());

            id.disconnect();
            assertEquals("disconnect", f.calls.get(f.calls.size() - 1));
            id.close();
            assertTrue(f.closed);
            assertTrue(id.isClosed());
            f.listener.onEvent(new CmProvider.Event(10, 0, f, null, new byte[0], null));
            assertNull(ch.getEvent(0, TimeUnit.SECONDS), "an event after close was posted");
        }
    }

    /** A PD that is never used: the call is refused before the provider sees it. */
    private static ProtectionDomain unusedPd() {
        return (ProtectionDomain) java.lang.reflect.Proxy.newProxyInstance(ProtectionDomain.class.getClassLoader(),
                new Class<?>[] {ProtectionDomain.class}, (proxy, m, args) -> {
                    throw new AssertionError("the PD was used: " + m.getName());
                });
    }

    @Test
    void aConnectRequestBringsANewIdOnTheProvider() throws Exception {
        FakeProvider provider = new FakeProvider();
        try (CmEventChannel ch = new CmEventChannel(); CmId listener = ch.createId(PortSpace.TCP)) {
            ProviderCmId.attach(listener, provider);
            listener.bindAddr(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7300));
            listener.listen(0);
            FakeId f = provider.made.get(0);
            assertEquals(List.of("bind 7300", "listen 1024"), f.calls);

            FakeId child = new FakeId(null, new InetSocketAddress(InetAddress.getLoopbackAddress(), 7300));
            CmProvider.Param peer = new CmProvider.Param(new byte[] {5}, 4, 2, 1, 6, 7, 0, 0x12345);
            f.listener.onEvent(new CmProvider.Event(4, 0, child, f, new byte[] {5}, peer));
            CmEvent e = next(ch);
            assertEquals(CmEventType.CONNECT_REQUEST, e.type());
            assertSame(listener, e.listenId());
            CmId c = e.id();
            assertNotSame(listener, c);
            assertEquals(4, e.param().responderResources());
            assertEquals(2, e.param().initiatorDepth());
            assertEquals(6, e.param().retryCount());
            assertEquals(0x12345, e.param().qpNum());
            assertArrayEquals(new byte[] {5}, e.privateData());
            assertNotNull(child.listener, "the new id's events have nowhere to go");

            c.accept(new ConnParam().privateData(new byte[] {7}));
            assertEquals(List.of("accept"), child.calls);
            assertArrayEquals(new byte[] {7}, child.param.privateData());
            child.listener.onEvent(new CmProvider.Event(9, 0, child, null, new byte[0], null));
            CmEvent est = next(ch);
            assertEquals(CmEventType.ESTABLISHED, est.type());
            assertSame(c, est.id());
            e.ack();
            est.ack();
            assertEquals(0, ch.unackedEvents());
            c.close();
            assertTrue(child.closed);
        }
    }

    @Test
    void aConnectRequestNobodyCanTakeIsRefused() throws Exception {
        FakeProvider provider = new FakeProvider();
        CmEventChannel ch = new CmEventChannel();
        try (CmId listener = ch.createId(PortSpace.TCP)) {
            ProviderCmId.attach(listener, provider);
            FakeId f = provider.made.get(0);
            ch.close();
            FakeId child = new FakeId(null, null);
            f.listener.onEvent(new CmProvider.Event(4, 0, child, f, new byte[0], null));
            assertTrue(child.closed, "a request on a closed channel must be refused (rdma_destroy_id rejects it)");
        }
    }

    @Test
    void onlyAFreshIdTakesAProvider() {
        FakeProvider provider = new FakeProvider();
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.close();
            assertNull(ProviderCmId.attach(id, provider));
            assertTrue(provider.made.get(0).closed, "the provider id made for a closed CmId leaked");
        }
    }
}
