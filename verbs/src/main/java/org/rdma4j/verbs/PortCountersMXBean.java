// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.Map;

/**
 * A port's counters over JMX ({@link Context#portCounters(int)}, read live on every attribute read):
 * registered on request with {@link PortCountersJmx#register(Context, int)} under
 * {@code org.rdma4j:type=PortCounters,device=DEVICE,port=N} in the platform MBean server, where
 * {@code jconsole}, {@code jcmd PID VM.print...} tools, a JMX exporter or Micrometer's JMX bridge read
 * them. A counter the device does not keep reads -1.
 */
public interface PortCountersMXBean {
    /** {@return the device's name} */
    String getDevice();

    /** {@return the port number} */
    int getPort();

    /** {@return {@link PortCounters.Traffic#sentPackets()}} */
    long getSentPackets();

    /** {@return {@link PortCounters.Traffic#receivedPackets()}} */
    long getReceivedPackets();

    /** {@return {@link PortCounters.Traffic#sends()}} */
    long getSends();

    /** {@return {@link PortCounters.Traffic#receives()}} */
    long getReceives();

    /** {@return {@link PortCounters.Traffic#linkDowned()}} */
    long getLinkDowned();

    /** {@return {@link PortCounters.Retries#retransmits()}} */
    long getRetransmits();

    /** {@return {@link PortCounters.Retries#completerRetries()}} */
    long getCompleterRetries();

    /** {@return {@link PortCounters.Retries#retryExceeded()}} */
    long getRetryExceeded();

    /** {@return {@link PortCounters.Retries#rnrRetryExceeded()}} */
    long getRnrRetryExceeded();

    /** {@return {@link PortCounters.Retries#receivedRnrNaks()}} */
    long getReceivedRnrNaks();

    /** {@return {@link PortCounters.Retries#receivedSequenceNaks()}} */
    long getReceivedSequenceNaks();

    /** {@return {@link PortCounters.Retries#duplicateRequests()}} */
    long getDuplicateRequests();

    /** {@return {@link PortCounters.Drops#total()}} */
    long getDrops();

    /** {@return every counter by its own name ({@link Context#counters(int)})} */
    Map<String, Long> getCounters();
}
