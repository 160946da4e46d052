// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.util.ArrayList;
import java.util.List;
import org.rdma4j.verbs.VerbsException;

/**
 * A pingpong run stopped: the lines to print on stderr (the rdma-core tool's own messages first, then
 * rdma4j's explanation of the cause, prefixed "rdma4j: "), and exit code 1, as the C tools do.
 */
final class PingpongFailure extends Exception {
    private static final long serialVersionUID = 1L;
    private final List<String> lines = new ArrayList<>();

    PingpongFailure(String... messages) {
        super(messages.length > 0 ? messages[0] : "failed", null, false, false);
        lines.addAll(List.of(messages));
    }

    /** The tool's message, then the cause's. */
    static PingpongFailure of(String message, Throwable cause) {
        PingpongFailure f = new PingpongFailure(message);
        if (cause != null) {
            f.lines.add("rdma4j: " + describe(cause));
        }
        return f;
    }

    /** Adds a line after the ones already there. */
    PingpongFailure then(String line) {
        lines.add(line);
        return this;
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    static String describe(Throwable t) {
        if (t instanceof VerbsException) {
            return t.getMessage();
        }
        String m = t.getMessage();
        return m != null && !m.isBlank() ? m : t.getClass().getSimpleName();
    }
}
