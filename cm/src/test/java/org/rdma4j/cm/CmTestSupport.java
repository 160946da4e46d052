// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WorkCompletion;

/** Two soft devices on one in-process fabric for the data, a {@link FakeGsiFabric} for their MADs. */
abstract class CmTestSupport {
    /** Generous bound on every wait; a test that hits it failed, it is not a measurement. */
    static final long WAIT_S = 20;

    /**
     * {@code -Drdma4j.cm.test.gsi=provider}: the MADs go through the devices' own QP1
     * ({@link GsiOpener#PROVIDER}, e.g. the soft device's GsiPort) instead of the fake pair; tests that
     * need the fake's fault injection or counters are skipped then.
     */
    static final boolean PROVIDER_GSI = "provider".equals(System.getProperty("rdma4j.cm.test.gsi"));

    static FakeGsiFabric fabric;
    static Device devA;
    static Device devB;
    static Gid gidA;
    static Gid gidB;
    static InetAddress ipA;
    static InetAddress ipB;
    private static int nextPort = 20_000;

    static void setUpDevices(String prefix) {
        setUpDevices("soft:loopback?name=" + prefix + "A&fabric=" + prefix,
                "soft:loopback?name=" + prefix + "B&fabric=" + prefix);
    }

    static void setUpDevices(String specA, String specB) {
        fabric = new FakeGsiFabric();
        CmEngine.INSTANCE.opener = PROVIDER_GSI ? GsiOpener.PROVIDER : fabric.opener();
        devA = Verbs.createDevice(specA);
        devB = Verbs.createDevice(specB);
        try (Context a = devA.open(); Context b = devB.open()) {
            gidA = a.queryGid(1, 1);
            gidB = b.queryGid(1, 1);
        }
        ipA = gidA.toInetAddress();
        ipB = gidB.toInetAddress();
    }

    /**
     * Removes the two devices. Ids the class left open on them fail it here, after they were closed and
     * the devices removed: the leak is this class's failure, not the next class's.
     */
    static void tearDownDevices() {
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
        String left = closeLeftovers(java.util.Set.of(devA.name(), devB.name()));
        Verbs.removeDevice(devA);
        Verbs.removeDevice(devB);
        if (left != null) {
            fail("CM agents still open when the class removed its devices (closed now): " + left);
        }
    }

    /** The fake QP1 pair for a test that injects faults or counts MADs; skips the test on real QP1s. */
    static FakeGsiFabric faults() {
        org.junit.jupiter.api.Assumptions.assumeFalse(PROVIDER_GSI, "needs the fake QP1's fault injection and counters");
        return fabric;
    }

    static synchronized int port() {
        return nextPort++;
    }

    /**
     * Waits (bounded) until every CM agent has gone (a closed id gives its agent back at once). If some
     * stay, the test that calls this fails, after what holds them was closed ({@link #closeLeftovers}):
     * the next test starts with none, so one leak fails one test.
     */
    static void awaitNoAgents() throws InterruptedException {
        awaitNoAgents(WAIT_S);
    }

    static void awaitNoAgents(long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (CmEngine.INSTANCE.devices.agentCount() != 0) {
            if (System.nanoTime() - deadline > 0) {
                int n = CmEngine.INSTANCE.devices.agentCount();
                String left = closeLeftovers(null);
                fail(n + " CM agents still open after every id was closed (closed now): " + left);
            }
            Thread.sleep(5);
        }
    }

    /**
     * Closes the CM agents still open on {@code deviceNames} (every device when null) and says which they
     * were, or returns null when there are none: first the ids on them, as the test should have done (a
     * closed id gives back its agent and device context), then any agent no open id holds.
     */
    static String closeLeftovers(java.util.Set<String> deviceNames) {
        CmEngine engine = CmEngine.INSTANCE;
        java.util.List<CmId> ids = new java.util.ArrayList<>();
        java.util.List<CmAgent> agents = new java.util.ArrayList<>();
        String what = engine.read(() -> {
            StringBuilder b = new StringBuilder();
            for (CmAgent a : engine.devices.agents.values()) {
                if (deviceNames != null && !deviceNames.contains(a.deviceName)) {
                    continue;
                }
                agents.add(a);
                b.append(b.isEmpty() ? "" : "; ").append(a.key).append(" held by");
                for (CmId id : a.members) {
                    ids.add(id);
                    b.append(' ').append(id).append(" in ").append(id.state);
                }
                if (a.members.isEmpty()) {
                    b.append(" no id");
                }
            }
            return b.toString();
        });
        if (agents.isEmpty()) {
            return null;
        }
        ids.forEach(CmId::close);
        engine.lock.lock();
        try {
            for (CmAgent a : agents) {
                if (engine.devices.agents.remove(a.key, a)) { // no id held it: the CM lost count
                    a.close();
                    engine.devices.releaseContext(a.deviceName);
                }
            }
        } finally {
            engine.lock.unlock();
        }
        return what;
    }

    /** Waits up to WAIT_S for an event to be queued on {@code ch} without taking it; fails naming {@code what}. */
    static void awaitQueued(CmEventChannel ch, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (ch.queued() == 0) {
            if (System.nanoTime() - deadline >= 0) {
                fail("no " + what + " within " + WAIT_S + " s");
            }
            Thread.sleep(1);
        }
    }

    static CmEvent expect(CmEventChannel ch, CmEventType type) throws InterruptedException {
        CmEvent e = ch.getEvent(WAIT_S, TimeUnit.SECONDS);
        assertNotNull(e, "no " + type + " event");
        e.ack();
        assertEquals(type, e.type(), () -> "got " + e + " instead of " + type);
        return e;
    }

    /** Short CM timeouts so that losses and silence resolve quickly: 16.8 ms + 67 ms per try, 3 retries. */
    static void quick(CmId id) {
        id.setResponseTimeout(12);
        id.setMaxCmRetries(3);
    }

    static void listen(CmId listener, InetAddress addr, int port, int backlog) {
        quick(listener);
        listener.bindAddr(new InetSocketAddress(addr, port));
        listener.listen(backlog);
    }

    static void resolve(CmId id, CmEventChannel ch, InetAddress dst, int port) throws InterruptedException {
        quick(id);
        id.resolveAddr(new InetSocketAddress(ipA, 0), new InetSocketAddress(dst, port), 2000);
        expect(ch, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(2000);
        expect(ch, CmEventType.ROUTE_RESOLVED);
    }

    static byte[] text(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    static String prefix(byte[] b, int n) {
        return new String(b, 0, n, java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** The next completion of {@code cq} (a copy), waiting at most {@link #WAIT_S}. */
    static WorkCompletion pollOne(CompletionQueue cq) {
        WorkCompletion[] slot = WorkCompletion.array(1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (cq.poll(slot, 1) != 1) {
            if (System.nanoTime() - deadline > 0) {
                return fail("no completion on " + cq);
            }
            Thread.onSpinWait();
        }
        WorkCompletion wc = new WorkCompletion();
        wc.copyFrom(slot[0]);
        return wc;
    }

    /** A PD, a CQ, a 4 KiB MR and the id's RC QP. */
    static final class Ep implements AutoCloseable {
        final CmId id;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final QueuePair qp;

        Ep(CmId id) {
            this.id = id;
            Context ctx = id.context();
            pd = ctx.allocPd();
            cq = ctx.createCq(64);
            mr = pd.regMr(Arena.ofShared().allocate(4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            qp = id.createQp(pd, new QpInitAttr(QpType.RC, cq, cq));
        }

        WorkCompletion poll() {
            return pollOne(cq);
        }

        @Override
        public void close() {
            id.destroyQp();
            mr.close();
            cq.close();
            pd.close();
        }
    }
}
