// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.rdma4j.tools.cli.Spin;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * How the pingpong loop waits for its next completions: polling the CQ (or, with -e, sleeping on the
 * completion channel, then polling), and rdma4j's stall limit. The C tools wait for ever when the peer
 * goes away while they wait to receive; so does this without {@code --stall-timeout}. With it, a wait
 * in which no completion arrives for that long ends the run with a message that says which exchange
 * it waited for and from which peer. An interrupt ends the wait too. Allocation free until it fails.
 *
 * <p>The pacing of an empty poll: the C tools spin on ibv_poll_cq; here a device outside this process
 * (a NIC, the kernel's rxe) is spun on as they do. On the soft device the wait spins for a short while
 * (the reply to a ping on a fast path comes within microseconds), then yields (still polling: an empty
 * poll receives what the device's link has queued), then, after {@link #YIELD_NS}, parks briefly: on a
 * small machine or an emulated VM a poller that never sleeps takes the core the device's own threads
 * and its peer need, and every packet waits for a time slice.
 */
final class CompletionWait {
    /** How long an empty wait on the soft device polls before it parks between polls. */
    static final long YIELD_NS = 200_000;
    /** Empty polls between two looks at the clock and the interrupt flag when spinning only. */
    private static final int CHECK_EVERY = 1024;

    private final CompletionQueue cq;
    private final CompletionChannel channel;
    private final boolean spinOnly;
    /** The stall limit, or 0 for none. */
    private final long stallNs;
    private final Spin spin;
    /** The completion events taken from the channel and not yet acknowledged. */
    private int events;

    /**
     * @param channel the completion channel with -e, else null
     * @param spinOnly true on a device whose progress needs no thread of this JVM: spin only
     * @param stallMs the stall limit in milliseconds, 0 for none (wait for ever, as the C tools)
     */
    CompletionWait(CompletionQueue cq, CompletionChannel channel, boolean spinOnly, long stallMs, int iters) {
        this.iters = iters;
        this.cq = cq;
        this.channel = channel;
        this.spinOnly = spinOnly;
        this.stallNs = TimeUnit.MILLISECONDS.toNanos(stallMs);
        this.spin = new Spin(stallNs > 0 ? stallNs : Long.MAX_VALUE, YIELD_NS);
    }

    /** Exchanges in the run (-n). */
    private final int iters;
    /** Who the completions are expected from, for the stall's message. */
    private String peer = "the peer";

    /** Names the peer the run exchanges with (the TCP peer and its queue pair), for the stall's message. */
    void peer(String description) {
        peer = description;
    }

    /** Events taken and not acknowledged yet (the caller acknowledges them before destroying the CQ). */
    int events() {
        return events;
    }

    /** They were acknowledged. */
    void acknowledged() {
        events = 0;
    }

    /** Re-arms the CQ's notification (-e). */
    void requestNotify() throws PingpongFailure {
        try {
            cq.reqNotify(false);
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't request CQ notification", e);
        }
    }

    /**
     * Waits until at least one completion is in {@code wc} and returns how many (with -e: after one
     * event, possibly 0, as ibv_*_pingpong). {@code received} and {@code sent}: the completions of the
     * run so far, for the stall's message.
     *
     * @throws PingpongFailure when polling fails, the thread is interrupted or the wait stalls
     */
    int next(WorkCompletion[] wc, int received, int sent) throws PingpongFailure {
        if (channel != null) {
            CompletionQueue evCq;
            try {
                evCq = channel.getEvent(stallNs > 0 ? Math.max(1, TimeUnit.NANOSECONDS.toMillis(stallNs)) : -1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PingpongFailure("Failed to get cq_event", "rdma4j: interrupted");
            } catch (VerbsException e) {
                throw PingpongFailure.of("Failed to get cq_event", e);
            }
            if (evCq == null) {
                throw stalled(received, sent);
            }
            ++events;
            if (evCq != cq) {
                throw new PingpongFailure("CQ event for unknown CQ " + evCq);
            }
            requestNotify();
            return poll(wc);
        }
        Spin wait = spin.begin();
        int idle = 0;
        long since = 0;
        for (;;) {
            int ne = poll(wc);
            if (ne > 0) {
                return ne;
            }
            if (spinOnly) {
                if ((++idle & (CHECK_EVERY - 1)) == 0) {
                    interrupted();
                    long now = System.nanoTime();
                    if (idle == CHECK_EVERY) {
                        since = now;
                    } else if (stallNs > 0 && now - since > stallNs) {
                        throw stalled(received, sent);
                    }
                }
                continue;
            }
            if (wait.idle() && stallNs > 0) {
                throw stalled(received, sent);
            }
            if ((wait.polls() & (CHECK_EVERY - 1)) == 0) {
                interrupted();
            }
        }
    }

    private int poll(WorkCompletion[] wc) throws PingpongFailure {
        try {
            return cq.poll(wc);
        } catch (VerbsException e) {
            throw PingpongFailure.of("poll CQ failed -1", e);
        }
    }

    private static void interrupted() throws PingpongFailure {
        if (Thread.currentThread().isInterrupted()) {
            throw new PingpongFailure("poll CQ failed -1", "rdma4j: interrupted");
        }
    }

    private PingpongFailure stalled(int received, int sent) {
        return new PingpongFailure(String.format(Locale.ROOT, "rdma4j: no completion for %s s (--stall-timeout)"
                + " while waiting for exchange %d of %d (%d received, %d sent) with %s", seconds(stallNs),
                Math.min(received, sent) + 1, iters, received, sent, peer));
    }

    private static String seconds(long ns) {
        double s = ns / 1e9;
        return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s);
    }
}
