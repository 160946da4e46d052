// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.rdma4j.soft.link.FaultyLink;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.shm.ShmLink;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The soft provider's {@link DeviceSpec}s: what {@code Verbs.createDevice("soft:...")} can make.
 * <pre>
 * soft[:loopback]?name=N&amp;fabric=F            a device on the in-process fabric F (default: the JVM's)
 * soft:udp?addr=A&amp;port=P&amp;peer-port=Q&amp;mode=M   RoCEv2 over UDP from address A (IPv4 or IPv6), UDP port P
 *                                           (4791), sending to port Q (P); M = auto|native|raw|channel;
 *                            &amp;link=L           L = udp (default), auto (shared memory to devices of other
 *                                           processes on this host that have a ring file, UDP to the rest), shm
 * either, plus loss=&amp;dup=&amp;reorder=&amp;corrupt= (probabilities 0..1) and seed=S: the device's outgoing
 * packets go through a seeded fault-injecting link, whose faults show as fault_* counters
 * </pre>
 * {@code name} defaults to the first free {@code softN} (loopback) or {@code udpN} (udp). Unknown
 * options and bad values are EINVAL, so a typo is not silently a different device. Stateless.
 */
final class SoftDeviceSpecs {
    private static final Set<String> FAULT_KEYS = Set.of("loss", "dup", "reorder", "corrupt", "seed");
    private static final Set<String> LOOPBACK_KEYS = Set.of("name", "fabric");
    private static final Set<String> UDP_KEYS = Set.of("name", "addr", "port", "peer-port", "mode", "link");

    private SoftDeviceSpecs() {}

    static Device create(DeviceSpec spec) {
        return switch (spec.kind()) {
            case "", "loopback" -> {
                known(spec, LOOPBACK_KEYS);
                yield SoftDevices.createOnFabric(spec.option("name"), spec.option("fabric"), faults(spec));
            }
            case "udp" -> {
                known(spec, UDP_KEYS);
                String addr = spec.option("addr");
                if (addr == null || addr.isEmpty()) {
                    throw bad(spec, "soft:udp needs addr=ADDRESS (the IPv4 or IPv6 address to bind)");
                }
                int port = port(spec, "port", UdpLink.ROCE_PORT);
                int peerPort = port(spec, "peer-port", port);
                String name = spec.option("name");
                yield SoftDevices.createUdp(name == null ? SoftDevices.freeName("udp") : name, address(spec, addr),
                        port, peerPort, mode(spec), policy(spec), faults(spec));
            }
            default -> throw bad(spec, "unknown kind '" + spec.kind() + "' (soft has loopback and udp)");
        };
    }

    private static void known(DeviceSpec spec, Set<String> keys) {
        for (String k : spec.options().keySet()) {
            if (!keys.contains(k) && !FAULT_KEYS.contains(k)) {
                List<String> all = new java.util.ArrayList<>(keys);
                all.addAll(FAULT_KEYS);
                java.util.Collections.sort(all);
                throw bad(spec, "unknown option '" + k + "' (known: " + String.join(", ", all) + ")");
            }
        }
    }

    /** A wrapper putting a seeded FaultyLink in front of the device's link, or null without fault options. */
    private static UnaryOperator<Link> faults(DeviceSpec spec) {
        if (spec.options().keySet().stream().noneMatch(k -> FAULT_KEYS.contains(k) && !k.equals("seed"))) {
            return null;
        }
        FaultyLink.Faults f = new FaultyLink.Faults(probability(spec, "loss"), probability(spec, "dup"),
                probability(spec, "reorder"), probability(spec, "corrupt"));
        long seed;
        try {
            seed = Long.parseLong(spec.option("seed", "1"));
        } catch (NumberFormatException e) {
            throw bad(spec, "seed=" + spec.option("seed") + " is not a whole number");
        }
        return link -> new FaultyLink(link, f, seed);
    }

    private static double probability(DeviceSpec spec, String key) {
        String v = spec.option(key, "0");
        try {
            double p = Double.parseDouble(v);
            if (p >= 0 && p <= 1) {
                return p;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(spec, key + "=" + v + " is not a probability 0..1");
    }

    private static int port(DeviceSpec spec, String key, int otherwise) {
        String v = spec.option(key);
        if (v == null) {
            return otherwise;
        }
        try {
            int p = Integer.parseInt(v);
            if (p >= 1 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(spec, key + "=" + v + " is not a UDP port 1..65535");
    }

    private static UdpLink.Mode mode(DeviceSpec spec) {
        String v = spec.option("mode", "auto");
        return switch (v) {
            case "auto" -> UdpLink.Mode.AUTO;
            case "native" -> UdpLink.Mode.NATIVE;
            case "raw" -> UdpLink.Mode.RAW_IPV4;
            case "channel" -> UdpLink.Mode.CHANNEL;
            default -> throw bad(spec, "mode=" + v + " is not one of auto, native, raw, channel");
        };
    }

    private static ShmLink.Policy policy(DeviceSpec spec) {
        String v = spec.option("link", "udp");
        return switch (v) {
            case "auto" -> ShmLink.Policy.AUTO;
            case "udp" -> ShmLink.Policy.UDP;
            case "shm" -> ShmLink.Policy.SHM;
            default -> throw bad(spec, "link=" + v + " is not one of auto, udp, shm");
        };
    }

    private static InetAddress address(DeviceSpec spec, String text) {
        // a literal only: a spec must not wait for DNS
        if (!text.matches("[0-9.]+|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.%a-zA-Z0-9]*")) {
            throw bad(spec, "addr=" + text + " is not an IPv4 or IPv6 address");
        }
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            throw bad(spec, "addr=" + text + " is not an IPv4 or IPv6 address");
        }
    }

    private static VerbsException bad(DeviceSpec spec, String why) {
        return new VerbsException(Errno.EINVAL, "device spec '" + spec + "': " + why);
    }
}
