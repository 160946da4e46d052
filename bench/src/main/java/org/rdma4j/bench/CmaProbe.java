// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.BufferedReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether cross-memory attach would pay for the shared-memory link (issue 11): one process reading
 * another's memory with {@code process_vm_readv(2)} (one copy, kernel to kernel page walk), against
 * the two copies a ring costs (sender to slot, slot to target) and against single-thread memcpy, for
 * message sizes from 4 KiB to 1 MiB, in one run. The source is a second JVM's native buffer (this
 * class run as {@code child}), so the figure includes what a real pull between processes pays: the
 * peer's page-table walk and page pinning. Not part of the device: a measurement that decides.
 * {@snippet lang=sh :
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.rdma4j.bench.CmaProbe [seconds]
 * }
 */
public final class CmaProbe {
    private static final int[] SIZES = {4096, 16384, 65536, 262144, 1 << 20};
    private static final int MAX = 1 << 20;

    private CmaProbe() {}

    public static void main(String[] args) throws Throwable {
        if (args.length > 0 && args[0].equals("child")) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment src = a.allocate(MAX, 4096);
                src.fill((byte) 5);
                PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
                out.println(ProcessHandle.current().pid() + " " + src.address());
                new BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            }
            return;
        }
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 0.5;
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                CmaProbe.class.getName(), "child"));
        Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader in = child.inputReader(StandardCharsets.UTF_8); Arena a = Arena.ofConfined()) {
            String[] f = in.readLine().split(" ");
            int pid = Integer.parseInt(f[0]);
            long remote = Long.parseLong(f[1]);
            Linker linker = Linker.nativeLinker();
            MethodHandle readv = linker.downcallHandle(linker.defaultLookup().find("process_vm_readv").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG));
            MemorySegment dst = a.allocate(MAX, 4096);
            MemorySegment slot = a.allocate(MAX, 4096);
            MemorySegment src = a.allocate(MAX, 4096);
            src.fill((byte) 5);
            MemorySegment local = a.allocate(16, 8);
            MemorySegment remoteIov = a.allocate(16, 8);
            local.set(JAVA_LONG, 0, dst.address());
            remoteIov.set(JAVA_LONG, 0, remote);
            System.out.printf(Locale.ROOT, "# load %s%n", java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim());
            System.out.printf(Locale.ROOT, "%8s %12s %14s %14s %8s%n", "bytes", "memcpy GB/s", "2 copies GB/s",
                    "vm_readv GB/s", "readv/memcpy");
            for (int size : SIZES) {
                local.set(JAVA_LONG, 8, size);
                remoteIov.set(JAVA_LONG, 8, size);
                long r = (long) readv.invokeExact(pid, local, 1L, remoteIov, 1L, 0L);
                if (r != size) {
                    System.out.println("process_vm_readv: " + r + " (refused: the link would keep copying)");
                    return;
                }
                double copy = rate(size, seconds, () -> MemorySegment.copy(src, 0, dst, 0, size));
                double two = rate(size, seconds, () -> {
                    MemorySegment.copy(src, 0, slot, 0, size);
                    MemorySegment.copy(slot, 0, dst, 0, size);
                });
                double cma = rate(size, seconds, () -> {
                    try {
                        long n = (long) readv.invokeExact(pid, local, 1L, remoteIov, 1L, 0L);
                        if (n != size) {
                            throw new IllegalStateException("short read " + n);
                        }
                    } catch (Throwable t) {
                        throw new IllegalStateException(t);
                    }
                });
                System.out.printf(Locale.ROOT, "%8d %12.2f %14.2f %14.2f %8.2f%n", size, copy / 1e9, two / 1e9,
                        cma / 1e9, cma / copy);
            }
            System.out.printf(Locale.ROOT, "# load %s%n", java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim());
        } finally {
            child.getOutputStream().close();
            child.waitFor();
        }
    }

    private static double rate(int size, double seconds, Runnable op) {
        for (int i = 0; i < 2000; i++) {
            op.run(); // warm-up: compiled before the timed loop
        }
        long n = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long t0 = System.nanoTime();
        while (System.nanoTime() < end) {
            for (int i = 0; i < 16; i++) {
                op.run();
            }
            n += 16;
        }
        return n * (double) size / ((System.nanoTime() - t0) / 1e9);
    }
}
