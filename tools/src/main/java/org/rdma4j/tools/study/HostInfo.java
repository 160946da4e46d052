// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What a study prints about the machine it ran on, so figures carry their context. Stateless. */
final class HostInfo {
    private HostInfo() {}

    /** "load average 0.52 0.80 1.01, 2 CPUs" (or without the load where /proc/loadavg is missing). */
    static String load() {
        String cpus = Runtime.getRuntime().availableProcessors() + " CPUs";
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).strip().split("\\s+");
            return "load average " + f[0] + " " + f[1] + " " + f[2] + ", " + cpus;
        } catch (IOException | RuntimeException e) {
            return cpus;
        }
    }
}
