// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.lang.management.ManagementFactory;
import java.util.Map;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * A port's counters over JMX ({@link Context#portCounters(int)}, read live on every attribute read):
 * registered on request with {@link #register(Context, int)} under
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

    /**
     * {@return the JMX name of a port's counters: {@code org.rdma4j:type=PortCounters,device=DEVICE,port=N}
     * (the device name quoted when it holds a character JMX reserves)}
     *
     * @param device the device's name
     * @param port the port number
     */
    static ObjectName objectName(String device, int port) {
        String d = device.matches("[A-Za-z0-9_.-]+") ? device : ObjectName.quote(device);
        try {
            return new ObjectName("org.rdma4j:type=PortCounters,device=" + d + ",port=" + port);
        } catch (JMException e) {
            throw new IllegalArgumentException("device name " + ObjectName.quote(device) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Registers port {@code portNum} of {@code ctx} in the platform MBean server under
     * {@link #objectName}; closing the returned handle (or it is left registered until the JVM ends)
     * unregisters it. Attribute reads on a closed context fail as {@link Context#counters} does.
     *
     * @param ctx an open context
     * @param portNum a port of its device
     * @return what unregisters it
     * @throws VerbsException EINVAL for a port the device does not have, EEXIST when that name is
     *     registered already
     */
    static AutoCloseable register(Context ctx, int portNum) {
        ctx.queryPort(portNum);
        ObjectName name = objectName(ctx.device().name(), portNum);
        var server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.registerMBean(new PortCountersBean(ctx, portNum), name);
        } catch (javax.management.InstanceAlreadyExistsException e) {
            throw new VerbsException(Errno.EEXIST, name + " is registered already");
        } catch (JMException e) {
            throw new VerbsException(Errno.EINVAL, "registering " + name + ": " + e.getMessage());
        }
        return () -> {
            try {
                server.unregisterMBean(name);
            } catch (javax.management.InstanceNotFoundException e) {
                // unregistered already: closing twice does nothing
            }
        };
    }
}
