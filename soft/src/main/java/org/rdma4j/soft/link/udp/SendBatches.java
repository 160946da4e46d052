// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import org.rdma4j.soft.link.LinkLog;

/**
 * The loop around a batched send call (sendmmsg(2)): the call may send fewer datagrams than asked
 * (it stops at the first that fails and reports that one's error on the next call), so the rest is
 * sent again from where it stopped; a datagram whose call fails (EAGAIN, ENOBUFS, EINVAL...) is
 * dropped, as a failed sendto drops it today, and the ones after it still go, in order. EINTR before
 * anything was sent retries the same datagram (a bounded number of times). Stateless, allocation free.
 */
final class SendBatches {
    /** Retries of one datagram interrupted (EINTR) before it was sent. */
    static final int EINTR_RETRIES = 3;

    private SendBatches() {}

    /** One batched send call over staged entries {@code from}..{@code from+count-1}. */
    interface Sender {
        /** Sends from entry {@code from}: how many (the first ones) were sent, or -errno if the first failed. */
        int sendFrom(int from, int count);
    }

    /** Sends staged entries 0..{@code count}-1 in order; returns how many were sent (the rest were dropped). */
    static int sendAll(Sender sender, int count) {
        return sendAll(sender, 0, count);
    }

    /** Sends staged entries {@code from}..{@code from+count}-1 in order; as {@link #sendAll(Sender, int)}. */
    static int sendAll(Sender sender, int from, int count) {
        int sent = 0;
        int at = from;
        int end = from + count;
        int interrupted = 0;
        while (at < end) {
            int r = sender.sendFrom(at, end - at);
            if (r > 0) {
                r = Math.min(r, end - at);
                sent += r;
                at += r;
                interrupted = 0;
            } else if (r == -LinuxSockets.EINTR && ++interrupted <= EINTR_RETRIES) {
                continue;
            } else {
                LinkLog.sendFailed("udp link", -r);
                at++; // this datagram failed: dropped, the next ones still go
                interrupted = 0;
            }
        }
        return sent;
    }
}
