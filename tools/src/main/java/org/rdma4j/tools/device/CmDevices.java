// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.device;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * Which device a tool on the connection manager (rping, mckey, rdma-server, rdma-client, cmatose, udaddy)
 * uses for its address: the one that has it, as rdma_cm finds it, or else a soft device over
 * RoCEv2/UDP made on it, so that {@code rdma4j rping -s -a 127.0.0.1} works with nothing set up.
 */
public final class CmDevices {
    private CmDevices() {
    }

    /**
     * The soft UDP device to make, if one is needed: with {@code --bind} always; else on {@code local}
     * when it is a specific address that no device has as a GID and no iWARP device serves (a wildcard
     * needs a device to exist already). The device is the first free {@code udpN}, so two tools in one
     * JVM (as in the tests) each make their own.
     *
     * @param devices the tool's device options ({@code --bind}, {@code --udp-port}, ...)
     * @param local the local address, or null
     * @return the device made (for {@link DeviceOptions#release()}), or null when the existing devices serve
     */
    public static Device softDeviceFor(DeviceOptions devices, InetAddress local) {
        if (devices.bindAddress() == null) {
            if (local == null || local.isAnyLocalAddress() || hasGid(Gid.of(local)) || onIwarpDevice(local)) {
                return null; // the CM picks among the devices there are (and says ADDR_ERROR if none fits)
            }
            devices.bind(local);
        }
        for (int i = 0; ; i++) {
            String name = "udp" + i;
            if (Verbs.devices().stream().anyMatch(d -> d.name().equals(name))) {
                continue;
            }
            try {
                return devices.resolve(name);
            } catch (VerbsException e) {
                if (e.errno() != Errno.EEXIST || i > 64) {
                    throw e;
                }
            }
        }
    }

    /** Whether some port of some device has {@code gid} in its GID table. */
    static boolean hasGid(Gid gid) {
        for (Device d : Verbs.devices()) {
            try (Context ctx = d.open()) {
                int ports = ctx.queryDevice().physPortCnt();
                for (int p = 1; p <= ports; p++) {
                    int n = ctx.queryPort(p).gidTblLen();
                    for (int i = 0; i < n; i++) {
                        try {
                            if (gid.equals(ctx.queryGid(p, i))) {
                                return true;
                            }
                        } catch (VerbsException e) {
                            // an empty entry
                        }
                    }
                }
            } catch (VerbsException e) {
                // a device that cannot be opened does not have it
            }
        }
        return false;
    }

    /**
     * Whether {@code local} is an address of an iWARP device (siw, a NIC's iWARP function): its GIDs are
     * MAC addresses, so {@link #hasGid} cannot tell; its connection manager, which maps the address to a
     * device by net device, can: a bind to it lands on the device.
     */
    static boolean onIwarpDevice(InetAddress local) {
        if (Verbs.devices().stream().noneMatch(d -> d.transportName().startsWith("iWARP"))) {
            return false;
        }
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.bindAddr(new InetSocketAddress(local, 0));
            Context c = id.context();
            return c != null && c.device().transportName().startsWith("iWARP");
        } catch (RuntimeException e) {
            return false;
        }
    }
}
