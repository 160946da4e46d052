// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * The two-JVM setting of {@code study latency}: this JVM (the client, on {@link #CLIENT_ADDRESS}) starts
 * a second one running {@code rdma4j study latency --serve} (the echo side, on {@link #SERVER_ADDRESS})
 * with the same module or class path, and the two talk over the child's standard input and output
 * ({@link PipeRendezvous}). Each JVM makes its own soft RoCEv2 device on its address and one UDP port,
 * with {@code link=udp} or {@code link=shm}; the UDP socket methods use the same two addresses. The
 * child ends with its parent. Not thread safe; one run at a time.
 */
final class LatencyPeerProcess {
    static final String CLIENT_ADDRESS = "127.0.0.3";
    static final String SERVER_ADDRESS = "127.0.0.4";
    /** How long the child may take to end after the last method. */
    private static final long EXIT_WAIT_S = 20;

    private LatencyPeerProcess() {}

    /** The soft UDP device of one side. */
    static Device device(String address, int udpPort, String link) {
        return Verbs.createDevice(DeviceSpec.of("soft", "udp").with("name", "study-lat-" + ProcessHandle.current().pid())
                .with("addr", address).with("port", Integer.toString(udpPort))
                .with("peer-port", Integer.toString(udpPort)).with("mode", "auto").with("link", link));
    }

    /** A UDP port free on both addresses now (the devices bind it a moment later). */
    static int freePort() {
        for (int attempt = 0; attempt < 20; attempt++) {
            try (DatagramSocket a = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(CLIENT_ADDRESS), 0));
                    DatagramSocket b = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(SERVER_ADDRESS),
                            a.getLocalPort()))) {
                return a.getLocalPort();
            } catch (IOException e) {
                // taken on the other address: try another
            }
        }
        throw new StudyFailure("no UDP port is free on both " + CLIENT_ADDRESS + " and " + SERVER_ADDRESS);
    }

    /**
     * Runs {@code methods} with the echo side in a child JVM; {@code childArgs} are its {@code study
     * latency --serve ...} arguments.
     */
    static List<Measured> run(LatencySettings s, List<LatencyMethod> methods, String link, int udpPort,
            List<String> childArgs) {
        Process child;
        try {
            child = new ProcessBuilder(command(childArgs)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new StudyFailure("cannot start the second JVM: " + e.getMessage(), e);
        }
        Device device = null;
        PipeRendezvous r = new PipeRendezvous(new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8)), new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8),
                "the echo JVM (pid " + child.pid() + ")");
        try {
            device = device(CLIENT_ADDRESS, udpPort, link);
            LatencyStudy.Side client = LatencyStudy.client(s, device, CLIENT_ADDRESS);
            List<Measured> results = new ArrayList<>();
            for (LatencyMethod m : methods) {
                results.add(client.run(m, r));
            }
            r.swap("bye", "the end of the run");
            return results;
        } catch (RuntimeException e) {
            r.fail(e.getMessage() == null ? e.toString() : e.getMessage());
            throw e;
        } finally {
            r.close();
            try {
                child.getOutputStream().close();
                if (!child.waitFor(EXIT_WAIT_S, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            } catch (IOException | InterruptedException e) {
                child.destroyForcibly();
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
            }
            if (device != null) {
                Verbs.removeDevice(device);
            }
        }
    }

    /** The child: the echo side of every method, then exit status 0 (1 after a failure, told to the parent). */
    static int serve(LatencySettings s, List<LatencyMethod> methods, String link, int udpPort) {
        // a child ends with the JVM that started it, whatever it is waiting for
        ProcessHandle.current().parent().ifPresent(p -> p.onExit().thenRun(() -> Runtime.getRuntime().halt(1)));
        PrintStream out = System.out;
        PipeRendezvous r = new PipeRendezvous(new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8)), out, "the measuring JVM");
        Device device = null;
        try {
            device = device(SERVER_ADDRESS, udpPort, link);
            LatencyStudy.Side server = LatencyStudy.server(s, device, SERVER_ADDRESS);
            for (LatencyMethod m : methods) {
                server.run(m, r);
            }
            r.swap("bye", "the end of the run");
            return 0;
        } catch (RuntimeException e) { // a StudyFailure, a VerbsException, or a bug: the parent says which
            String message = e instanceof StudyFailure || e instanceof VerbsException || e.getMessage() == null
                    ? String.valueOf(e.getMessage()) : e.toString();
            r.fail(message); // the measuring JVM prints it (one line for the user, not one per JVM)
            return 1;
        } finally {
            r.close();
            if (device != null) {
                Verbs.removeDevice(device);
            }
        }
    }

    /** java, this JVM's native-access and rdma4j options, its module or class path, the tool's main class. */
    static List<String> command(List<String> toolArgs) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        boolean nativeAccess = false;
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--enable-native-access") || a.startsWith("-Drdma4j.") || a.startsWith("-Xss")) {
                cmd.add(a);
                nativeAccess |= a.startsWith("--enable-native-access");
            }
        }
        Module tools = LatencyPeerProcess.class.getModule();
        if (tools.isNamed() && System.getProperty("jdk.module.path") != null) {
            if (!nativeAccess) {
                cmd.add("--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs");
            }
            cmd.addAll(List.of("-p", System.getProperty("jdk.module.path"), "-m",
                    tools.getName() + "/org.rdma4j.tools.Rdma4j"));
        } else {
            if (!nativeAccess) {
                cmd.add("--enable-native-access=ALL-UNNAMED");
            }
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.rdma4j.tools.Rdma4j"));
        }
        cmd.addAll(toolArgs);
        return cmd;
    }
}
