// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks the hand-written binding against the installed headers: generates a C program that prints
 * sizeof and offsetof of every member path of every layout in {@link Layouts#ALL} and the value of
 * every constant of {@link Layouts#CONSTANT_CLASSES}, compiles it with gcc against verbs.h, runs it and
 * compares each line with what the Java layouts say. Skipped (with the reason) without gcc or verbs.h,
 * unless the environment variable RDMA4J_NATIVE_PROBE=required (CI) makes that a failure.
 */
class LayoutProbeTest {
    static final Path VERBS_H = Path.of("/usr/include/infiniband/verbs.h");
    static final Path RDMA_CMA_H = Path.of("/usr/include/rdma/rdma_cma.h");

    @TempDir
    Path dir;

    /** Expected probe output lines, key -> value, in the order the C program prints them. */
    static Map<String, Long> expectations() {
        Map<String, Long> expected = new LinkedHashMap<>();
        for (GroupLayout g : Layouts.ALL) {
            String type = ctype(g);
            expected.put("sizeof " + type, g.byteSize());
            walk(g, type, "", 0, expected);
        }
        for (Class<?> c : Layouts.CONSTANT_CLASSES) {
            for (Field f : c.getDeclaredFields()) {
                int mod = f.getModifiers();
                if (Modifier.isPublic(mod) && Modifier.isStatic(mod) && Modifier.isFinal(mod)
                        && (f.getType() == int.class || f.getType() == long.class)) {
                    try {
                        expected.put("const " + f.getName(), ((Number) f.get(null)).longValue());
                    } catch (IllegalAccessException e) {
                        throw new AssertionError(e);
                    }
                }
            }
        }
        return expected;
    }

    static String ctype(GroupLayout g) {
        String tag = g.name().orElseThrow(() -> new AssertionError("a layout in Layouts.ALL has no name: " + g));
        return (g instanceof UnionLayout ? "union " : "struct ") + tag;
    }

    private static void walk(GroupLayout g, String type, String prefix, long base, Map<String, Long> out) {
        long off = 0;
        for (MemoryLayout m : g.memberLayouts()) {
            long at = base + off;
            if (g instanceof StructLayout) {
                off += m.byteSize();
            }
            if (m instanceof PaddingLayout) {
                continue;
            }
            if (m.name().isEmpty()) {
                if (!(m instanceof GroupLayout inner)) {
                    throw new AssertionError(type + ": an unnamed member that is not a union or struct: " + m);
                }
                walk(inner, type, prefix, at, out); // C reaches its members as the parent's
                continue;
            }
            String path = prefix + m.name().get();
            out.put("offsetof " + type + " " + path, at);
            out.put("sizeof " + type + " " + path, m.byteSize());
            if (m instanceof GroupLayout inner) {
                walk(inner, type, path + ".", at, out);
            }
        }
    }

    static String program(Map<String, Long> expected) {
        StringBuilder c = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include <poll.h>
                #include <fcntl.h>
                #include <sys/eventfd.h>
                #include <netinet/in.h>
                #include <sys/socket.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>

                int main(void) {
                """);
        for (String key : expected.keySet()) {
            String[] p = key.split(" ");
            String expr = switch (p[0]) {
                case "const" -> "(long long) (" + p[1] + ")";
                case "offsetof" -> "(long long) offsetof(" + p[1] + " " + p[2] + ", " + p[3] + ")";
                default -> p.length == 3 ? "(long long) sizeof(" + p[1] + " " + p[2] + ")"
                        : "(long long) sizeof(((" + p[1] + " " + p[2] + " *) 0)->" + p[3] + ")";
            };
            c.append("    printf(\"%s %lld\\n\", \"").append(key).append("\", ").append(expr).append(");\n");
        }
        return c.append("    return 0;\n}\n").toString();
    }

    @Test
    void layoutsAndConstantsMatchTheInstalledHeaders() throws Exception {
        boolean required = "required".equals(System.getenv("RDMA4J_NATIVE_PROBE"));
        String missing = !Files.isRegularFile(VERBS_H) ? VERBS_H + " is missing (apt-get install libibverbs-dev)"
                : !Files.isRegularFile(RDMA_CMA_H) ? RDMA_CMA_H + " is missing (apt-get install librdmacm-dev)"
                : !gccWorks() ? "gcc is missing (apt-get install gcc libc6-dev)" : null;
        if (missing != null) {
            if (required) {
                fail("RDMA4J_NATIVE_PROBE=required but " + missing + "; scripts/native-deps.sh installs both");
            }
            Assumptions.abort("layout probe skipped: " + missing);
        }
        Map<String, Long> expected = expectations();
        Path src = dir.resolve("probe.c");
        Path exe = dir.resolve("probe");
        Files.writeString(src, program(expected));
        String cc = run(List.of("gcc", "-std=gnu11", "-o", exe.toString(), src.toString()));
        assertTrue(Files.isExecutable(exe), "gcc failed:\n" + cc);
        String output = run(List.of(exe.toString()));
        Map<String, Long> actual = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            int sp = line.lastIndexOf(' ');
            if (sp > 0) {
                actual.put(line.substring(0, sp), Long.parseLong(line.substring(sp + 1)));
            }
        }
        List<String> wrong = new ArrayList<>();
        expected.forEach((k, v) -> {
            Long c = actual.get(k);
            if (!v.equals(c)) {
                wrong.add(k + ": Java " + v + ", C " + c);
            }
        });
        assertEquals(List.of(), wrong, "layouts or constants that differ from " + VERBS_H);
        assertTrue(expected.size() > 100, "the probe checked too little: " + expected.size());
    }

    @Test
    void everyCheckedLayoutIsNamedAndListed() {
        assertTrue(Layouts.ALL.contains(DeviceLayouts.ibv_device_attr));
        assertTrue(Layouts.ALL.contains(DeviceLayouts.ibv_gid));
        for (GroupLayout g : Layouts.ALL) {
            ctype(g);
        }
        Map<String, Long> e = expectations();
        assertEquals(offsetFromPath(DeviceLayouts.ibv_context, "ops.alloc_mw"),
                e.get("offsetof struct ibv_context ops.alloc_mw"));
        assertEquals(8L, e.get("offsetof struct ibv_async_event event_type"));
    }

    private static long offsetFromPath(MemoryLayout l, String path) {
        return CLayout.offset(l, path);
    }

    private static boolean gccWorks() {
        try {
            run(List.of("gcc", "--version"));
            return true;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(command + " did not finish");
        }
        String s = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(command + " failed (" + p.exitValue() + "):\n" + s);
        }
        return s;
    }
}
