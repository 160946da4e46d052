// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.VerbsException;

/**
 * The synchronous side of an {@link Endpoint}, as librdmacm's ids made without an event channel
 * (ucma_complete): each step waits on the endpoint's private channel for its event, bounded, and any
 * other outcome becomes the errno librdmacm sets, worded by {@link CmWords}. Keeps the event a step
 * completed with.
 */
final class EndpointEvents {
    private final CmEventChannel channel;
    private final CmId id;
    /** The last event a synchronous step completed with. */
    volatile CmEvent lastEvent;
    /** A request's endpoint: its CONNECT_REQUEST; else null. */
    CmEvent request;

    EndpointEvents(CmEventChannel channel, CmId id) {
        this.channel = channel;
        this.id = id;
    }

    /**
     * Waits for {@code want} (from {@code peer}, or the id's peer when null); any other outcome throws
     * with the errno librdmacm's ucma_complete sets, worded by {@link CmWords}.
     */
    CmEvent await(long timeoutNs, CmEventType want, InetSocketAddress peer) throws InterruptedException {
        CmEvent e = channel.getEvent(timeoutNs, TimeUnit.NANOSECONDS);
        if (e == null) {
            throw CmWords.timedOut(id, want, request != null, peer, timeoutNs);
        }
        e.ack();
        lastEvent = e;
        if (e.type() == want && e.status() == 0) {
            return e;
        }
        throw failure(e, want, peer);
    }

    private VerbsException failure(CmEvent e, CmEventType want, InetSocketAddress peer) {
        return CmWords.failure(e, want, request != null, peer);
    }

    /**
     * rdma_get_request's wait: the next CONNECT_REQUEST for the endpoint's id within {@code ns}, or null;
     * an event about the id itself ends the wait with its errno.
     */
    CmEvent nextRequest(long ns) throws InterruptedException {
        long deadline = System.nanoTime() + Math.min(ns, Long.MAX_VALUE / 4);
        while (true) {
            CmEvent e = channel.getEvent(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (e == null) {
                return null;
            }
            e.ack();
            if (e.type() == CmEventType.CONNECT_REQUEST && e.listenId() == id) {
                return e;
            }
            if (e.id() == id) {
                lastEvent = e;
                throw failure(e, CmEventType.CONNECT_REQUEST, null);
            }
            // not reached for a request's id: migrate moves its queued events to its endpoint's channel
        }
    }

    /** rdma_disconnect's wait: DISCONNECTED (or DEVICE_REMOVAL) within {@code timeoutNs}, else ETIMEDOUT. */
    void awaitDisconnected(long timeoutNs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            CmEvent e = channel.getEvent(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (e == null) {
                throw CmWords.timedOut(id, CmEventType.DISCONNECTED, false, null, timeoutNs);
            }
            e.ack();
            lastEvent = e;
            if (e.type() == CmEventType.DISCONNECTED || e.type() == CmEventType.DEVICE_REMOVAL) {
                return; // the connection is down, whether the peer answered (status 0) or not
            }
        }
    }

    /** A passive endpoint closing: requests that came and were not taken are rejected rather than left waiting. */
    void rejectUntaken() {
        try {
            CmEvent e;
            while ((e = channel.getEvent(0, TimeUnit.NANOSECONDS)) != null) {
                e.ack();
                if (e.type() == CmEventType.CONNECT_REQUEST && e.id() != id) {
                    e.id().close();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // another thread took them, or the channel is closing
        }
    }
}
