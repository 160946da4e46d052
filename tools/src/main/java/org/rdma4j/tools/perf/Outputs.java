// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.IOException;
import java.io.PrintWriter;

/** After a run: --json and --plot. Stateless. */
final class Outputs {
    private Outputs() {}

    /** Writes the files asked for; returns the exit code (1 when a file cannot be written). */
    static int write(PerfParams p, PerfRun run, PrintWriter err) {
        try {
            if (p.json != null) {
                JsonReport.write(p.json, p, run);
            }
            if (p.plot != null) {
                Plots.write(p.plot, p, run);
            }
            return 0;
        } catch (IOException | RuntimeException e) {
            err.println("rdma4j: cannot write " + (p.plot != null ? p.plot : p.json) + ": " + e.getMessage());
            err.flush();
            return 1;
        }
    }
}
