// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.io.PrintWriter;
import org.rdma4j.cm.Endpoint;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/** Checks of a completion and the closing disconnect, shared by rdma-server and rdma-client. */
final class Exchange {
    private Exchange() {
    }

    /**
     * rdma4j checks what the C programs do not: the completion succeeded, is of the expected kind and,
     * for a receive, carried {@code length} bytes (negative: any). EIO with the status otherwise.
     */
    static void check(WorkCompletion wc, WcOpcode opcode, int length) {
        if (!wc.isSuccess()) {
            throw new VerbsException(Errno.EIO, "the " + opcode + " completed with status " + wc.status()
                    + " (vendor error " + wc.vendorErr() + ")");
        }
        if (wc.opcode() != opcode) {
            throw new VerbsException(Errno.EIO, "expected a " + opcode + " completion, got " + wc.opcode());
        }
        if (length >= 0 && wc.byteLen() != length) {
            throw new VerbsException(Errno.EIO, "the message has " + wc.byteLen() + " bytes, expected " + length);
        }
    }

    /** rdma_disconnect, whose result the C programs ignore: a failure is only told with -v. */
    static void disconnect(Endpoint id, PrintWriter out, boolean verbose) throws InterruptedException {
        try {
            id.disconnect();
        } catch (VerbsException e) {
            if (verbose) {
                out.println("rdma_disconnect: " + CmUtil.strerror(e.errno()) + " (" + e.getMessage() + ")");
            }
        }
    }
}
