// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

/** A study run that cannot go on (a failed completion, a wait that ran out): one line for the user. */
final class StudyFailure extends RuntimeException {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    StudyFailure(String message) {
        super(message);
    }

    StudyFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
