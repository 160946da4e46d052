// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class VerbsVersionTest {
    /** Set by verbs/pom.xml's surefire configuration from the build's own properties. */
    private static String expected(String key) {
        String v = System.getProperty(key);
        assertNotNull(v, key + " is not set: run the test through Maven (verbs/pom.xml sets it)");
        return v;
    }

    @Test
    void versionIsTheProjectVersionAndTheCommitTheBuildRecorded() {
        String commit = expected("rdma4j.expected.commit");
        if (Boolean.parseBoolean(expected("rdma4j.expected.dirty")) && !commit.equals("unknown")) {
            commit += "-dirty";
        }
        assertEquals(new Verbs.Version(expected("rdma4j.expected.version"), commit), Verbs.version());
    }

    @Test
    void valuesTheBuildDidNotFillInAreUnknown() {
        Properties p = new Properties();
        p.setProperty("version", "${project.version}");
        p.setProperty("commit", " ");
        p.setProperty("dirty", "true");
        assertEquals(new Verbs.Version("unknown", "unknown"), VersionResource.parse(p));
        assertEquals(new Verbs.Version("unknown", "unknown"), VersionResource.parse(new Properties()));
    }

    @Test
    void aCommitBuiltFromChangedFilesIsMarkedDirty() {
        Properties p = new Properties();
        p.setProperty("version", "0.1.0");
        p.setProperty("commit", "0b57a51c2d3e");
        p.setProperty("dirty", "true");
        assertEquals(new Verbs.Version("0.1.0", "0b57a51c2d3e-dirty"), VersionResource.parse(p));
        p.setProperty("dirty", "false");
        assertEquals("0.1.0 (commit 0b57a51c2d3e)", VersionResource.parse(p).toString());
    }
}
