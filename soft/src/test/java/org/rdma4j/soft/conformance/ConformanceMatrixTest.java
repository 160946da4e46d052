// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.rdma4j.conformance.AbstractVerbsTest;
import org.rdma4j.conformance.Capability;
import org.rdma4j.conformance.ConformanceSetup;
import org.rdma4j.conformance.Requires;
import org.rdma4j.conformance.Rule;

/**
 * Keeps the contract, its tests and the matrix in docs/CONFORMANCE.md in step: every rule of
 * docs/SEMANTICS.md is cited by a suite ({@link Rule}) and every citation names a rule; the matrix of
 * suite x setup that CONFORMANCE.md shows is the one the suites' {@link Requires} and
 * {@link SoftSetups} make.
 */
class ConformanceMatrixTest {
    private static final Path DOCS = Path.of("..", "docs");
    private static final Pattern RULE_ID = Pattern.compile("\\*\\*(S-[A-Z]+-\\d+)\\*\\*");

    /** The suites of rdma4j-conformance, from its classes directory (test) or its jar (verify). */
    static List<Class<?>> suites() throws IOException, URISyntaxException {
        Path root = Path.of(AbstractVerbsTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> names;
        if (Files.isDirectory(root)) {
            try (Stream<Path> files = Files.list(root.resolve("org/rdma4j/conformance"))) {
                names = files.map(f -> f.getFileName().toString()).toList();
            }
        } else {
            try (FileSystem jar = FileSystems.newFileSystem(root);
                 Stream<Path> files = Files.list(jar.getPath("org/rdma4j/conformance"))) {
                names = files.map(f -> f.getFileName().toString()).toList();
            }
        }
        List<Class<?>> l = new ArrayList<>();
        for (String n : names.stream().sorted().toList()) {
            if (n.endsWith("ConformanceTest.class")) {
                try {
                    l.add(Class.forName("org.rdma4j.conformance." + n.substring(0, n.length() - 6)));
                } catch (ClassNotFoundException e) {
                    throw new AssertionError(e);
                }
            }
        }
        assertTrue(l.size() >= 20, () -> "found only " + l.size() + " suites in " + root);
        return l;
    }

    private static List<Method> tests(Class<?> suite) {
        return Arrays.stream(suite.getDeclaredMethods()).filter(m -> !Modifier.isStatic(m.getModifiers()))
                .filter(m -> Arrays.stream(m.getAnnotations()).anyMatch(a -> {
                    String t = a.annotationType().getSimpleName();
                    return t.equals("Test") || t.equals("ParameterizedTest");
                })).toList();
    }

    @Test
    void everyRuleIsCitedAndEveryCitationIsARule() throws Exception {
        Set<String> rules = new TreeSet<>();
        Matcher m = RULE_ID.matcher(Files.readString(DOCS.resolve("SEMANTICS.md")));
        while (m.find()) {
            assertTrue(rules.add(m.group(1)), () -> "rule defined twice: " + m.group(1));
        }
        Set<String> cited = new TreeSet<>();
        for (Class<?> s : suites()) {
            Rule r = s.getAnnotation(Rule.class);
            assertTrue(r != null, () -> s.getSimpleName() + " cites no rule of docs/SEMANTICS.md (@Rule)");
            cited.addAll(List.of(r.value()));
            for (Method t : tests(s)) {
                Rule tr = t.getAnnotation(Rule.class);
                if (tr != null) {
                    cited.addAll(List.of(tr.value()));
                }
            }
        }
        Set<String> unknown = new TreeSet<>(cited);
        unknown.removeAll(rules);
        assertEquals(Set.of(), unknown, "cited but not in docs/SEMANTICS.md");
        Set<String> uncited = new TreeSet<>(rules);
        uncited.removeAll(cited);
        assertEquals(Set.of(), uncited, "rules of docs/SEMANTICS.md no suite cites");
    }

    /** The matrix as Markdown: one row per suite, one column per setup. */
    static String matrix() throws Exception {
        List<ConformanceSetup> setups = new SoftSetups().setups();
        StringBuilder b = new StringBuilder("| suite |");
        setups.forEach(s -> b.append(' ').append(s.name()).append(" |"));
        b.append("\n|---|");
        setups.forEach(s -> b.append("---|"));
        b.append('\n');
        for (Class<?> suite : suites()) {
            b.append("| ").append(suite.getSimpleName().replace("ConformanceTest", "")).append(" |");
            Requires all = suite.getAnnotation(Requires.class);
            for (ConformanceSetup s : setups) {
                EnumSet<Capability> missing = missing(all, s);
                if (!missing.isEmpty()) {
                    b.append(" skipped: no ").append(names(missing)).append(" |");
                    continue;
                }
                int skipped = 0;
                EnumSet<Capability> why = EnumSet.noneOf(Capability.class);
                for (Method t : tests(suite)) {
                    EnumSet<Capability> mm = missing(t.getAnnotation(Requires.class), s);
                    if (!mm.isEmpty()) {
                        skipped++;
                        why.addAll(mm);
                    }
                }
                b.append(skipped == 0 ? " runs |" : " runs; " + skipped + (skipped == 1 ? " test" : " tests")
                        + " skipped: no " + names(why) + " |");
            }
            b.append('\n');
        }
        return b.toString();
    }

    private static EnumSet<Capability> missing(Requires r, ConformanceSetup s) {
        EnumSet<Capability> m = EnumSet.noneOf(Capability.class);
        if (r != null) {
            for (Capability c : r.value()) {
                if (!s.has(c)) {
                    m.add(c);
                }
            }
        }
        return m;
    }

    private static String names(EnumSet<Capability> cs) {
        return String.join(", ", cs.stream().map(Capability::name).toList());
    }

    @Test
    void conformanceMdShowsTheMatrixTheSuitesAndSetupsMake() throws Exception {
        String doc = Files.readString(DOCS.resolve("CONFORMANCE.md"));
        String matrix = matrix();
        System.out.print(matrix);
        String begin = "<!-- matrix: generated by ConformanceMatrixTest -->\n";
        String end = "<!-- end of matrix -->";
        int i = doc.indexOf(begin);
        int j = doc.indexOf(end);
        assertTrue(i >= 0 && j > i, "docs/CONFORMANCE.md has no matrix between the markers");
        assertEquals(matrix, doc.substring(i + begin.length(), j),
                "docs/CONFORMANCE.md's matrix is out of date; the current one is in the test's standard output");
    }
}
