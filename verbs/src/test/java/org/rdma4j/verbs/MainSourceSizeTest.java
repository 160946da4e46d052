// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The project's size rule (CONTRIBUTING.md): no main source file of any module over 600 lines, so
 * that a file keeps one job. A file may be exempted by name with its reason and a ceiling it may not
 * grow past; an exemption whose file shrank under the limit (or went away) must be removed, so the
 * list below stays the list of files still over.
 */
class MainSourceSizeTest {
    static final int LIMIT = 600;

    /** Exempted files: path from the repository root, the most lines allowed, and why. */
    private record Exemption(int ceiling, String reason) {
    }

    private static final Map<String, Exemption> EXEMPT = Map.ofEntries(
            Map.entry("soft/src/main/java/org/rdma4j/soft/wire/Opcode.java",
                    new Exemption(626, "a table: every IBTA opcode with its headers and flags, one entry each")));

    @Test
    void noMainSourceFileIsOverTheLimitUnlessExemptedByName() {
        Map<String, Integer> sizes = mainSources(repositoryRoot());
        assertTrue(sizes.size() > 100, "found the main sources of every module: " + sizes.size());
        List<String> problems = new ArrayList<>();
        sizes.forEach((path, lines) -> {
            Exemption e = EXEMPT.get(path);
            if (e == null && lines > LIMIT) {
                problems.add(path + ": " + lines + " lines, over " + LIMIT + "; cut it by job");
            } else if (e != null && lines > e.ceiling()) {
                problems.add(path + ": " + lines + " lines, over its exemption's " + e.ceiling() + " ("
                        + e.reason() + "); do not grow it");
            } else if (e != null && lines <= LIMIT) {
                problems.add(path + ": " + lines + " lines, within " + LIMIT + ": remove its exemption");
            }
        });
        EXEMPT.keySet().stream().filter(p -> !sizes.containsKey(p))
                .forEach(p -> problems.add(p + ": exempted but gone: remove its exemption"));
        assertEquals(List.of(), problems);
    }

    @Test
    void linesAreCountedAsWcCountsThem() throws IOException {
        Path f = Files.createTempFile("size", ".java");
        try {
            Files.writeString(f, "a\nb\n\nc");
            assertEquals(3, lines(f)); // wc -l counts newlines: the last line without one is not counted
        } finally {
            Files.delete(f);
        }
    }

    /** The repository's root: the first directory up from here whose pom.xml lists the verbs module. */
    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            Path pom = d.resolve("pom.xml");
            try {
                if (Files.isRegularFile(pom) && Files.readString(pom).contains("<module>verbs</module>")) {
                    return d;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        throw new AssertionError("no repository root above " + dir);
    }

    /** Every {@code MODULE/src/main/**}{@code .java} file, as a path from the root, with its line count. */
    private static Map<String, Integer> mainSources(Path root) {
        Map<String, Integer> sizes = new TreeMap<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(Files::isDirectory).toList()) {
                Path main = module.resolve("src/main");
                if (!Files.isDirectory(main)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(main)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                        sizes.put(root.relativize(f).toString().replace('\\', '/'), lines(f));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sizes;
    }

    private static int lines(Path f) throws IOException {
        byte[] b = Files.readAllBytes(f);
        int n = 0;
        for (byte x : b) {
            if (x == '\n') {
                n++;
            }
        }
        return n;
    }
}
