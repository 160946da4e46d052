// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Shows a port's counters over JMX on request: {@link #register} puts a {@link PortCountersMXBean} in
 * the platform MBean server. Thread safe.
 */
public final class PortCountersJmx {
    private PortCountersJmx() {
    }

    /**
     * {@return the JMX name of a port's counters: {@code org.rdma4j:type=PortCounters,device=DEVICE,port=N}
     * (the device name quoted when it holds a character JMX reserves)}
     *
     * @param device the device's name
     * @param port the port number
     */
    public static ObjectName objectName(String device, int port) {
        String d = device.matches("[A-Za-z0-9_.-]+") ? device : ObjectName.quote(device);
        try {
            return new ObjectName("org.rdma4j:type=PortCounters,device=" + d + ",port=" + port);
        } catch (JMException e) {
            throw new IllegalArgumentException("device name " + ObjectName.quote(device) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Registers port {@code portNum} of {@code ctx} in the platform MBean server under
     * {@link #objectName}; closing the returned handle unregisters it (left open, it stays registered
     * until the JVM ends). Attribute reads on a closed context fail as {@link Context#counters} does.
     *
     * @param ctx an open context
     * @param portNum a port of its device
     * @return what unregisters it
     * @throws VerbsException EINVAL for a port the device does not have, EEXIST when that name is
     *     registered already
     */
    public static AutoCloseable register(Context ctx, int portNum) {
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
