// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.Map;

/** The MXBean {@link PortCountersMXBean#register} registers: every read asks the context again. */
final class PortCountersBean implements PortCountersMXBean {
    private final Context ctx;
    private final int port;

    PortCountersBean(Context ctx, int port) {
        this.ctx = ctx;
        this.port = port;
    }

    private PortCounters now() {
        return ctx.portCounters(port);
    }

    @Override
    public String getDevice() {
        return ctx.device().name();
    }

    @Override
    public int getPort() {
        return port;
    }

    @Override
    public long getSentPackets() {
        return now().traffic().sentPackets();
    }

    @Override
    public long getReceivedPackets() {
        return now().traffic().receivedPackets();
    }

    @Override
    public long getSends() {
        return now().traffic().sends();
    }

    @Override
    public long getReceives() {
        return now().traffic().receives();
    }

    @Override
    public long getLinkDowned() {
        return now().traffic().linkDowned();
    }

    @Override
    public long getRetransmits() {
        return now().retries().retransmits();
    }

    @Override
    public long getCompleterRetries() {
        return now().retries().completerRetries();
    }

    @Override
    public long getRetryExceeded() {
        return now().retries().retryExceeded();
    }

    @Override
    public long getRnrRetryExceeded() {
        return now().retries().rnrRetryExceeded();
    }

    @Override
    public long getReceivedRnrNaks() {
        return now().retries().receivedRnrNaks();
    }

    @Override
    public long getReceivedSequenceNaks() {
        return now().retries().receivedSequenceNaks();
    }

    @Override
    public long getDuplicateRequests() {
        return now().retries().duplicateRequests();
    }

    @Override
    public long getDrops() {
        return now().drops().total();
    }

    @Override
    public Map<String, Long> getCounters() {
        return now().all();
    }
}
