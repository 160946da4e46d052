// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * Two soft devices on an in-process fabric of their own for a cm tool's tests, with the addresses of
 * their GID 1 and fresh ports from {@code firstPort} on; {@link #remove()} removes the devices (retrying
 * while ids in time wait still hold them).
 */
final class SoftPair {
    final Device a;
    final Device b;
    final String ipA;
    final String ipB;
    private final AtomicInteger ports;

    SoftPair(String name, int firstPort) {
        a = Verbs.createDevice("soft:loopback?name=" + name + "-a&fabric=" + name);
        b = Verbs.createDevice("soft:loopback?name=" + name + "-b&fabric=" + name);
        try (Context ca = a.open(); Context cb = b.open()) {
            ipA = ca.queryGid(1, 1).toInetAddress().getHostAddress();
            ipB = cb.queryGid(1, 1).toInetAddress().getHostAddress();
        }
        ports = new AtomicInteger(firstPort + (int) (ProcessHandle.current().pid() % 400));
    }

    /** A port no other test of the JVM used. */
    String port() {
        return Integer.toString(ports.incrementAndGet());
    }

    /** A number 1..250 that changes with the ports handed out (for loopback addresses of a test's own). */
    int slot() {
        return ports.get() % 250 + 1;
    }

    /** The server's lines without the -v one. */
    static String lines(CmRun server) {
        return server.out().toString().replaceAll("(?m)^listening on .*\n", "");
    }

    void remove() throws InterruptedException {
        for (Device d : new Device[] {a, b}) {
            for (int i = 0; i < 100; i++) {
                try {
                    Verbs.removeDevice(d);
                    break;
                } catch (VerbsException e) {
                    Thread.sleep(50);
                }
            }
        }
    }
}
