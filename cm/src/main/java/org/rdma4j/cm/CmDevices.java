// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * The devices the connection manager uses, as cma.c's device list: one open context per device shared
 * by the ids on it (counted; closed with the last), one {@link CmAgent} per device port (its QP1,
 * counted the same way), and the list of devices address resolution scans. Guarded by the engine's lock.
 */
final class CmDevices {
    private static final class DeviceRef {
        final Context ctx;
        int refs;

        DeviceRef(Context ctx) {
            this.ctx = ctx;
        }
    }

    private final CmEngine engine;
    final Map<String, CmAgent> agents = new HashMap<>();
    private final Map<String, DeviceRef> contexts = new HashMap<>();

    CmDevices(CmEngine engine) {
        this.engine = engine;
    }

    /**
     * {@return agent counters for tests and tools: malformed, unmatched, send errors, requests that waited
     * for a flow slot, turns with MADs, MADs taken in them}
     */
    long[] agentCounters(String deviceName, int portNum) {
        return engine.read(() -> {
            CmAgent a = agents.get(deviceName + "/" + portNum);
            return a == null ? null : new long[] {a.malformed, a.unmatched, a.sendErrors, a.deferred, a.turns, a.taken};
        });
    }

    /** {@return how many agents are open (a test checks that they go with their last id)} */
    int agentCount() {
        return engine.read(agents::size);
    }

    /** The devices address resolution scans, and when they were listed (guarded by the engine's lock). */
    private List<Device> deviceList = List.of();
    private long deviceListNs;

    /**
     * The devices to resolve addresses on, those the engine has open first. {@link Verbs#devices()}
     * asks every provider (a service lookup, libibverbs' device list) and costs milliseconds, under
     * the engine's lock, so the list is kept for a second; {@code fresh} lists them again (a lookup that
     * found nothing in the kept list tries once more with a fresh one: a device made just now is found).
     */
    List<Device> devicesForResolve(boolean fresh) {
        engine.lock.lock();
        try {
            long now = System.nanoTime();
            if (fresh || deviceList.isEmpty() || now - deviceListNs > 1_000_000_000L) {
                deviceList = List.copyOf(Verbs.devices());
                deviceListNs = now;
            }
            List<Device> open = new ArrayList<>(deviceList.size());
            List<Device> rest = new ArrayList<>();
            for (Device d : deviceList) {
                (contexts.containsKey(d.name()) ? open : rest).add(d);
            }
            open.addAll(rest);
            return open;
        } finally {
            engine.lock.unlock();
        }
    }

    Context acquireContext(Device d) {
        engine.lock.lock();
        try {
            DeviceRef r = contexts.get(d.name());
            if (r == null) {
                r = new DeviceRef(d.open());
                contexts.put(d.name(), r);
            }
            r.refs++;
            return r.ctx;
        } finally {
            engine.lock.unlock();
        }
    }

    void releaseContext(String name) {
        engine.lock.lock();
        try {
            DeviceRef r = contexts.get(name);
            if (r != null && --r.refs <= 0) {
                try {
                    r.ctx.close();
                    contexts.remove(name);
                } catch (RuntimeException e) {
                    r.refs = 0; // still in use (the program's PDs, CQs, QPs): kept open, tried again later
                }
            }
        } finally {
            engine.lock.unlock();
        }
    }

    CmAgent acquireAgent(Device d, int portNum, int gidIndex) {
        String key = d.name() + "/" + portNum;
        CmAgent a = agents.get(key);
        if (a == null) {
            Context ctx = acquireContext(d);
            GsiPort gsi;
            try {
                gsi = engine.opener.open(ctx, portNum, gidIndex);
            } catch (RuntimeException e) {
                releaseContext(d.name());
                throw e;
            }
            a = new CmAgent(engine, key, d.name(), ctx, gsi, portNum, gidIndex);
            agents.put(key, a);
            a.start();
        }
        a.refs++;
        return a;
    }

    void releaseAgent(CmAgent a) {
        if (--a.refs <= 0 && agents.remove(a.key, a)) {
            a.close();
            releaseContext(a.deviceName);
        }
    }

    /** Binds {@code id} to a device port: its context, GID and agent. */
    void attach(CmId id, DeviceMatch m) {
        CmAgent a = acquireAgent(m.device(), m.portNum(), m.gidIndex());
        id.agent = a;
        a.members.add(id);
        id.context = acquireContext(m.device());
        id.deviceName = m.device().name();
        id.portNum = m.portNum();
        id.gidIndex = m.gidIndex();
        id.sgid = m.gid();
        id.conn.caGuid = m.device().guid();
    }

    /** A received request's new id on the port the request came to: that agent and the device's context, counted. */
    void attachRequest(CmId c, CmAgent a, Device dev) {
        c.agent = a;
        a.refs++;
        a.members.add(c);
        c.context = acquireContext(dev);
        c.deviceName = a.deviceName;
        c.portNum = a.portNum;
    }
}
