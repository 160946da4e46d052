// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.util.ArrayList;
import java.util.List;

/** A run that cannot go on: the lines to print on stderr (perftest's wording where it has one); exit 1. */
final class PerfFailure extends Exception {
    private final List<String> lines = new ArrayList<>();

    PerfFailure(String... lines) {
        super(String.join("; ", lines));
        this.lines.addAll(List.of(lines));
    }

    /** {@code line} followed by "rdma4j: " and the cause's message. */
    static PerfFailure of(String line, Throwable cause) {
        PerfFailure f = new PerfFailure(line, "rdma4j: " + cause.getMessage());
        f.initCause(cause);
        return f;
    }

    PerfFailure then(String line) {
        lines.add(line);
        return this;
    }

    List<String> lines() {
        return lines;
    }
}
