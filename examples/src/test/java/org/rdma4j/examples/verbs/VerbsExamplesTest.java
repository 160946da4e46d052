// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;

/**
 * The raw-verbs examples, each with both ends on the embedded soft0 (their default), with its ends on
 * two soft devices of one in-process fabric and on two soft RoCEv2/UDP devices ({@code -d A -d B}),
 * and as a program in a JVM of its own (exit status 0, or 2 with the usage for a bad command line).
 * Each program checks every message and value itself and throws on the first wrong one; these tests
 * check what it reports.
 */
class VerbsExamplesTest {
    private static Device left;
    private static Device right;
    private static Device udpLeft;
    private static Device udpRight;

    interface Program {
        void run(Ends ends, PrintStream out) throws Exception;
    }

    enum Example {
        UD(UdPingPong.class, UdPingPong::run,
                "ping 0: 104 bytes (40 GRH + 64 payload) from QPN 0x",
                "10 UD round trips; the datagram with the wrong Q_Key was dropped"),
        ATOMICS(AtomicCounter.class, AtomicCounter::run,
                "counter = 2000: 4 QPs x 500 FETCH_AND_ADD, each old value 0..1999 returned once",
                "guarded = 200: 4 QPs x 50 READ+WRITE under a COMPARE_AND_SWAP lock"),
        SRQ(SharedReceiveQueue.class, SharedReceiveQueue::run,
                "SRQ limit event 1 after 13 messages: 3 receives left; reposted 13, re-armed",
                "SRQ limit event 4 after 52 messages: 3 receives left; reposted 13, re-armed",
                "3 senders x 20 messages, each sender's in order, through one SRQ of 16 receives; 4 limit events");

        final Class<?> main;
        final Program program;
        final String[] lines;

        Example(Class<?> main, Program program, String... lines) {
            this.main = main;
            this.program = program;
            this.lines = lines;
        }

        void check(String out) {
            for (String line : lines) {
                assertTrue(out.contains(line), () -> "no '" + line + "' in:\n" + out);
            }
        }
    }

    @BeforeAll
    static void devices() {
        left = Verbs.createDevice("soft:loopback?name=verbsExA&fabric=verbsEx");
        right = Verbs.createDevice("soft:loopback?name=verbsExB&fabric=verbsEx");
        // RoCEv2 over UDP between two loopback addresses: IPv4-mapped GIDs, an IPv4 header in the GRH area
        int base = 41_000 + (int) (ProcessHandle.current().pid() % 2000) * 2;
        udpLeft = Verbs.createDevice("soft:udp?name=verbsExU1&addr=127.0.0.85&port=" + base
                + "&peer-port=" + (base + 1));
        udpRight = Verbs.createDevice("soft:udp?name=verbsExU2&addr=127.0.0.86&port=" + (base + 1)
                + "&peer-port=" + base);
    }

    @AfterAll
    static void removeDevices() {
        Verbs.removeDevice(left);
        Verbs.removeDevice(right);
        Verbs.removeDevice(udpLeft);
        Verbs.removeDevice(udpRight);
    }

    private static String run(Example e, String... args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        e.program.run(Ends.parse(args), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @EnumSource(Example.class)
    void bothEndsOnSoft0ByDefault(Example e) throws Exception {
        e.check(run(e));
    }

    @ParameterizedTest
    @EnumSource(Example.class)
    void endsOnTwoDevicesNamedWithDashD(Example e) throws Exception {
        e.check(run(e, "-d", left.name(), "-d", right.name()));
    }

    @ParameterizedTest
    @EnumSource(Example.class)
    void endsOnTwoUdpDevicesOverRoceV2(Example e) throws Exception {
        e.check(run(e, "-d", udpLeft.name(), "-d", udpRight.name()));
    }

    /** Runs {@code e}'s main in a new JVM on this test's class and module path; returns {exit, stdout, stderr}. */
    private static String[] runMain(Example e, Path dir, String... args) throws IOException, InterruptedException {
        String path = System.getProperty("java.class.path", "") + File.pathSeparator
                + System.getProperty("jdk.module.path", "");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", path,
                e.main.getName()));
        command.addAll(List.of(args));
        Path out = dir.resolve("out");
        Path err = dir.resolve("err");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(e.main.getSimpleName() + " did not end within 120 s");
        }
        return new String[] {Integer.toString(p.exitValue()), Files.readString(out), Files.readString(err)};
    }

    @ParameterizedTest
    @EnumSource(Example.class)
    void mainRunsOnItsOwnAndExitsZero(Example e, @TempDir Path dir) throws Exception {
        String[] r = runMain(e, dir);
        assertEquals("0", r[0], () -> "stderr:\n" + r[2]);
        e.check(r[1]);
    }

    @Test
    void aBadCommandLineExitsTwoWithTheUsage(@TempDir Path dir) throws Exception {
        String[] r = runMain(Example.UD, dir, "-d", "soft0", "-x");
        assertEquals("2", r[0], () -> "stderr:\n" + r[2]);
        assertTrue(r[2].startsWith("usage: UdPingPong [-d DEVICE [-d DEVICE]]"), r[2]);
    }

    @Test
    void theCommandLineNamesOneDeviceForBothEndsOrOneForEach() {
        assertEquals(new Ends("soft0", "soft0"), Ends.parse(new String[0]));
        assertEquals(new Ends("rxe0", "rxe0"), Ends.parse(new String[] {"-d", "rxe0"}));
        assertEquals(new Ends("a", "b"), Ends.parse(new String[] {"-d", "a", "-d", "b"}));
        assertThrows(IllegalArgumentException.class, () -> Ends.parse(new String[] {"-d", "a", "-d", "b", "-d", "c"}));
        assertThrows(IllegalArgumentException.class, () -> Ends.parse(new String[] {"-d"}));
    }
}
