// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** Reads {@code version.properties}, which the build fills in, into a {@link Verbs.Version}. */
final class VersionResource {
    static final String UNKNOWN = "unknown";

    private VersionResource() {}

    /** The version of the classes this module was loaded from; "unknown" parts when not built by Maven. */
    static Verbs.Version load() {
        try (InputStream in = Verbs.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return new Verbs.Version(UNKNOWN, UNKNOWN);
            }
            Properties p = new Properties();
            p.load(in);
            return parse(p);
        } catch (IOException e) {
            throw new UncheckedIOException("reading org/rdma4j/verbs/version.properties", e);
        }
    }

    /**
     * The version and commit in {@code p}; a value the build did not fill in (still a {@code ${...}}
     * placeholder, empty or absent) is "unknown", and a commit built from a tree with changes gets
     * "-dirty".
     */
    static Verbs.Version parse(Properties p) {
        String version = value(p, "version");
        String commit = value(p, "commit");
        if (!commit.equals(UNKNOWN) && Boolean.parseBoolean(value(p, "dirty"))) {
            commit += "-dirty";
        }
        return new Verbs.Version(version, commit);
    }

    private static String value(Properties p, String key) {
        String v = p.getProperty(key, "").strip();
        return v.isEmpty() || v.contains("${") ? UNKNOWN : v;
    }
}
