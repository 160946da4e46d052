// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.verbs.Device;

/**
 * Runs the methods of {@code study latency} in one setting, one after the other, each on fresh
 * sockets or QPs: the client side on a thread of this JVM, the echo side on another thread
 * ({@link #inProcess}) or in a child JVM ({@link LatencyPeerProcess}). Returns each method's timed round
 * trips. Not thread safe; one run at a time.
 */
final class LatencyStudy {
    /** How long one method may take (warm-up and timed round trips) before it is given up. */
    static final long METHOD_LIMIT_NS = 600_000_000_000L;

    /** One side of one method (the echo side returns null). */
    @FunctionalInterface
    interface Side {
        Measured run(LatencyMethod m, Rendezvous r);
    }

    private LatencyStudy() {}

    /** The client side: UDP from {@code udpAddress}, RDMA on {@code device}. */
    static Side client(LatencySettings s, Device device, String udpAddress) {
        return (m, r) -> m.rdma ? RdmaPingPong.client(m, s, device, r)
                : UdpPingPong.client(s, m.blocking, udpAddress, r);
    }

    /** The echo side: UDP from {@code udpAddress}, RDMA on {@code device}. */
    static Side server(LatencySettings s, Device device, String udpAddress) {
        return (m, r) -> {
            if (m.rdma) {
                RdmaPingPong.server(m, s, device, r);
            } else {
                UdpPingPong.server(s, m.blocking, udpAddress, r);
            }
            return null;
        };
    }

    /** Both sides in this JVM, each method on two new threads. */
    static List<Measured> inProcess(List<LatencyMethod> methods, Side client, Side server) {
        List<Measured> results = new ArrayList<>();
        for (LatencyMethod m : methods) {
            Rendezvous r = new Rendezvous.InProcess();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Measured[] result = new Measured[1];
            Thread serverThread = Thread.ofPlatform().name("study-latency-server").unstarted(() -> {
                try {
                    server.run(m, r);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            Thread clientThread = Thread.ofPlatform().name("study-latency-client").unstarted(() -> {
                try {
                    result[0] = client.run(m, r);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            serverThread.start();
            clientThread.start();
            join(m, failure, clientThread, serverThread);
            rethrow(failure.get());
            results.add(result[0]);
        }
        return results;
    }

    /** Waits for both threads; when one fails or the limit passes, interrupts both (their waits end). */
    private static void join(LatencyMethod m, AtomicReference<Throwable> failure, Thread... threads) {
        long deadline = System.nanoTime() + METHOD_LIMIT_NS;
        try {
            for (Thread t : threads) {
                while (t.isAlive()) {
                    t.join(200);
                    boolean late = System.nanoTime() - deadline > 0;
                    if (late) {
                        failure.compareAndSet(null, new StudyFailure(m.id + ": did not finish within "
                                + METHOD_LIMIT_NS / 1_000_000_000L + " s"));
                    }
                    if (failure.get() != null) {
                        for (Thread other : threads) {
                            other.interrupt();
                        }
                    }
                }
            }
        } catch (InterruptedException e) {
            for (Thread other : threads) {
                other.interrupt();
            }
            Thread.currentThread().interrupt();
            throw new StudyFailure(m.id + ": interrupted");
        }
    }

    static void rethrow(Throwable t) {
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new StudyFailure(t.toString(), t);
        }
    }
}
