// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.util.concurrent.Callable;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code rdma4j mcast recv|send}: UD multicast. {@code recv} attaches UD queue pairs to a group
 * ({@code ibv_attach_mcast}) and checks every datagram that arrives; {@code send} sends datagrams to the
 * group (QPN 0xFFFFFF, an address handle whose GRH names the group). Options and output lines match
 * {@code interop/mcast/ud_mcast.c}, its C counterpart for libibverbs, so either side can be rxe.
 * {@snippet lang=sh :
 * rdma4j mcast recv --bind 127.0.0.1 -m 239.1.2.3 -n 100 &   # every device that joins gets a copy
 * rdma4j mcast send --bind 127.0.0.2 -m 239.1.2.3 -n 100
 * }
 */
@Command(name = "mcast", mixinStandardHelpOptions = true,
        description = {"UD multicast: 'recv' attaches UD queue pairs to a multicast group and checks what arrives, "
                + "'send' sends datagrams to the group (destination QPN 0xFFFFFF, the group as the GRH's "
                + "destination GID, a Q_Key). Every attached QP of every device in the group gets its own copy.",
            "Over UDP (--bind) each device joins the IP group of the GID (239.1.2.3 for ::ffff:239.1.2.3, "
                    + "the IPv6 group itself otherwise) on the interface of its address, as Linux rxe does; "
                    + "start the receivers first (each prints 'waiting for N datagrams' once attached).",
            "recv prints one line per datagram: the receiving QP, the sequence number, the sender's GID (from "
                    + "the GRH area) and QPN (from the work completion), the destination GID and whether the "
                    + "payload pattern (a big-endian sequence number, then byte i = seq + i) is intact. "
                    + "With --reply it answers each datagram by unicast from the receiving QP, and the sender "
                    + "waits until -r receiving QPs have answered every datagram.",
            "Exit code 0 when every datagram (and every answer) arrived intact within -t seconds, 1 on a "
                    + "failure or timeout, 2 on a bad flag. interop/mcast/ud_mcast.c is the same tool in C "
                    + "for libibverbs devices (Linux rxe).",
            "Examples:",
            "  rdma4j mcast recv --bind 127.0.0.1 -m 239.1.2.3 -n 100 --reply &",
            "  rdma4j mcast recv --bind 127.0.0.3 -m 239.1.2.3 -n 100 --reply -q 2 &",
            "  rdma4j mcast send --bind 127.0.0.2 -m 239.1.2.3 -n 100 --reply -r 3"},
        subcommands = {McastCommand.Recv.class, McastCommand.Send.class})
public final class McastCommand implements Runnable {
    /** The Q_Key ibv_ud_pingpong uses. */
    public static final int DEFAULT_QKEY = 0x11111111;
    /** Largest -n. */
    static final int MAX_ITERS = 100_000;
    /** Largest -q: the soft device's max_mcast_qp_attach. */
    static final int MAX_QPS = 16;
    /** Largest -r. */
    static final int MAX_RECEIVERS = 64;

    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(),
                "Missing role: say which one, recv or send (e.g. 'rdma4j mcast recv --bind 127.0.0.1 -m 239.1.2.3').");
    }

    /** A 32-bit Q_Key: decimal or 0x hex, 0..0xffffffff. */
    static final class Qkey implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            long v;
            try {
                String s = value.strip();
                v = s.startsWith("0x") || s.startsWith("0X") ? Long.parseLong(s.substring(2), 16) : Long.parseLong(s);
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' is not a number");
            }
            if (v < 0 || v > 0xFFFF_FFFFL) {
                throw new TypeConversionException("'" + value + "' is not a 32-bit Q_Key");
            }
            return (int) v;
        }
    }

    /** The options both roles have. */
    abstract static class Role implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DeviceOptions devices;

        @Option(names = {"-d", "--ib-dev"}, order = 1, paramLabel = "<dev>",
                description = "use device <dev> (default: the --bind device, else the first device found)")
        String ibDev;

        @Option(names = {"-i", "--ib-port"}, order = 2, paramLabel = "<port>", converter = CNumber.class,
                description = "use port <port> of the device (default 1)")
        int ibPort = 1;

        @Option(names = {"-g", "--gid-idx"}, order = 3, paramLabel = "<gid index>", converter = CNumber.class,
                description = "local GID index (default 1: a --bind device's address); its IP version must be "
                        + "the group's")
        int gidIndex = 1;

        Gid group;
        String groupText;

        @Option(names = {"-m", "--group"}, order = 4, required = true, paramLabel = "<group>",
                description = "the multicast group: a GID (ff0e::1, 32 hex digits) or an IPv4 group address "
                        + "(239.1.2.3 means ::ffff:239.1.2.3)")
        void group(String text) {
            Gid g;
            try {
                g = Gid.parse(text);
            } catch (IllegalArgumentException e) {
                throw usage("-m " + text + " is not a GID or an IP address");
            }
            if (!g.isMulticast()) {
                throw usage("-m " + text + " is not a multicast group (ff00::/8, or IPv4 224.0.0.0/4)");
            }
            group = g;
            groupText = text;
        }

        @Option(names = {"-Q", "--qkey"}, order = 5, paramLabel = "<qkey>", converter = Qkey.class,
                description = "Q_Key of the QPs and of every send (default 0x11111111)")
        int qkey = DEFAULT_QKEY;

        @Option(names = {"-n", "--iters"}, order = 6, paramLabel = "<n>", converter = CNumber.class,
                description = "datagrams to send, or to receive on each QP (default 10)")
        int iters = 10;

        @Option(names = {"-s", "--size"}, order = 7, paramLabel = "<size>", converter = CNumber.class,
                description = "bytes per datagram, 4 to the port's active MTU (default 64)")
        int size = 64;

        @Option(names = "--reply", order = 9,
                description = "recv: answer every datagram by unicast; send: wait for the answers")
        boolean reply;

        @Option(names = {"-t", "--timeout"}, order = 11, paramLabel = "<seconds>", converter = CNumber.class,
                description = "give up after this long: recv from the attach on, send after the last datagram "
                        + "(default 30)")
        int timeout = 30;

        ParameterException usage(String message) {
            return new ParameterException(spec.commandLine(), message);
        }

        abstract boolean receiver();

        int qps() {
            return 1;
        }

        int receivers() {
            return 1;
        }

        @Override
        public Integer call() {
            if (ibPort < 1 || ibPort > 255) {
                throw usage("-i " + ibPort + ": the port must be 1..255");
            }
            if (gidIndex < 0 || gidIndex > 255) {
                throw usage("-g " + gidIndex + ": the GID index must be 0..255");
            }
            if (iters < 1 || iters > MAX_ITERS) {
                throw usage("-n " + iters + ": the number of datagrams must be 1.." + MAX_ITERS);
            }
            if (size < 4 || size > 65536) {
                throw usage("-s " + size + ": the size must be 4..65536 (and at most the port's active MTU)");
            }
            if (qps() < 1 || qps() > MAX_QPS) {
                throw usage("-q " + qps() + ": the number of QPs must be 1.." + MAX_QPS);
            }
            if (receivers() < 1 || receivers() > MAX_RECEIVERS) {
                throw usage("-r " + receivers() + ": the number of receivers must be 1.." + MAX_RECEIVERS);
            }
            if (timeout < 1 || timeout > 86400) {
                throw usage("-t " + timeout + ": the timeout must be 1..86400 seconds");
            }
            var err = spec.commandLine().getErr();
            Device device;
            try {
                device = devices.resolve(ibDev);
            } catch (VerbsException e) {
                err.println("rdma4j: " + e.getMessage());
                err.flush();
                return 1;
            }
            try {
                McastRun run = new McastRun(receiver(), ibPort, gidIndex, group, qkey, iters, size, qps(), reply,
                        receivers(), timeout, spec.commandLine().getOut(), err);
                return run.run(device);
            } finally {
                devices.release();
            }
        }
    }

    @Command(name = "recv", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Attach -q UD QPs to the group and wait for -n datagrams on each; check and print every "
                    + "one. With --reply answer each by unicast to its sender's GID and QPN."})
    public static final class Recv extends Role {
        @Option(names = {"-q", "--qps"}, order = 8, paramLabel = "<n>", converter = CNumber.class,
                description = "UD QPs to attach to the group, each gets every datagram (default 1, at most "
                        + MAX_QPS + ")")
        int qps = 1;

        @Override
        boolean receiver() {
            return true;
        }

        @Override
        int qps() {
            return qps;
        }
    }

    @Command(name = "send", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Send -n datagrams to the group (QPN 0xFFFFFF). With --reply wait until -r receiving QPs "
                    + "have answered every one."})
    public static final class Send extends Role {
        @Option(names = {"-r", "--receivers"}, order = 10, paramLabel = "<n>", converter = CNumber.class,
                description = "with --reply: how many receiving QPs must answer every datagram (default 1)")
        int receivers = 1;

        @Override
        boolean receiver() {
            return false;
        }

        @Override
        int receivers() {
            return receivers;
        }
    }
}
