// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.util.concurrent.Exchanger;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How the two sides of a {@code study latency} ping-pong tell each other what the other needs (a UDP
 * address, a QP endpoint) and wait for each other between the steps: each gives its line and gets the
 * other's. Between two threads an {@link Exchanger}; between two JVMs the lines of the child's standard
 * input and output ({@link LatencyPeerProcess}). Every swap is bounded.
 */
interface Rendezvous {
    /** How long one swap may wait for the other side. */
    long TIMEOUT_NS = 60_000_000_000L;

    /** Gives {@code mine} to the other side and returns what it gave; {@link StudyFailure} if it does not come. */
    String swap(String mine, String step);

    /** Two threads of this process. */
    final class InProcess implements Rendezvous {
        private final Exchanger<String> exchanger = new Exchanger<>();

        @Override
        public String swap(String mine, String step) {
            try {
                return exchanger.exchange(mine, TIMEOUT_NS, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StudyFailure(step + ": interrupted (the other side failed)");
            } catch (TimeoutException e) {
                throw new StudyFailure(step + ": the other side did not come within " + TIMEOUT_NS / 1_000_000_000L
                        + " s");
            }
        }
    }
}
