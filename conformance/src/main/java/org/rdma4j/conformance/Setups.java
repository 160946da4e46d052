// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The setups every suite runs on: those of every {@link SetupProvider} on the class path, narrowed by
 * the system property {@value #PROPERTY} (comma-separated names, e.g.
 * {@code -Drdma4j.conformance.setups=udp6,faulty}) to run some of them only.
 */
public final class Setups {
    public static final String PROPERTY = "rdma4j.conformance.setups";

    private static volatile List<ConformanceSetup> all;

    private Setups() {}

    /** The argument source of every suite ({@code @MethodSource} of {@link AbstractVerbsTest}). */
    public static List<ConformanceSetup> all() {
        List<ConformanceSetup> l = all;
        if (l == null) {
            synchronized (Setups.class) {
                if (all == null) {
                    all = load();
                }
                l = all;
            }
        }
        return l;
    }

    private static List<ConformanceSetup> load() {
        List<ConformanceSetup> found = new ArrayList<>();
        for (SetupProvider p : ServiceLoader.load(SetupProvider.class)) {
            found.addAll(p.setups());
        }
        if (found.isEmpty()) {
            throw new IllegalStateException("no conformance setup: put a " + SetupProvider.class.getName()
                    + " in META-INF/services on the test class path");
        }
        String only = System.getProperty(PROPERTY, "").strip();
        if (only.isEmpty()) {
            return List.copyOf(found);
        }
        Set<String> names = Arrays.stream(only.split(",")).map(String::strip).collect(Collectors.toSet());
        List<ConformanceSetup> l = found.stream().filter(s -> names.contains(s.name())).toList();
        if (l.isEmpty()) {
            throw new IllegalStateException(PROPERTY + "=" + only + " names none of "
                    + found.stream().map(ConformanceSetup::name).toList());
        }
        return l;
    }
}
