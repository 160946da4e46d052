// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import java.io.PrintWriter;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventType;

/**
 * The connection-manager event step of the CM tools (rping, cmatose, udaddy, mckey), which librdmacm's
 * examples each write for themselves: wait a bounded time for the next event (of a channel, or of one id's
 * queue), hand it to the program's handler and ack it once the handler is done, whatever the handler did;
 * when none comes in time the program says what it waited for. Also the examples' name of an event type and
 * their line for an error event.
 */
public final class CmEvents {
    /** Where the events come from: {@code CmEventChannel::getEvent}, or a queue's {@code poll}. */
    @FunctionalInterface
    public interface Source {
        /** {@return the next event, or null after {@code timeout} without one} */
        CmEvent poll(long timeout, TimeUnit unit) throws InterruptedException;
    }

    /** The program's handling of one event (acked after it returns or throws). */
    @FunctionalInterface
    public interface Handler {
        /** {@return the program's status after the event (0: go on)} */
        int handle(CmEvent e);
    }

    private CmEvents() {
    }

    /**
     * Waits up to {@code timeout} for the next event of {@code events} and hands it to {@code handler},
     * acking it afterwards; {@return the handler's status, or {@code none}'s when no event came in time}
     */
    public static int next(Source events, long timeout, TimeUnit unit, Handler handler, IntSupplier none)
            throws InterruptedException {
        CmEvent e = events.poll(timeout, unit);
        if (e == null) {
            return none.getAsInt();
        }
        try {
            return handler.handle(e);
        } finally {
            e.ack();
        }
    }

    /** {@return librdmacm's name of {@code type} ({@code rdma_event_str}): RDMA_CM_EVENT_ and the type} */
    public static String name(CmEventType type) {
        return "RDMA_CM_EVENT_" + type.name();
    }

    /**
     * cmatose's, udaddy's and mckey's line for an error event, {@code "program: event: RDMA_CM_EVENT_...,
     * error: status"}, then rdma4j's account of it on a second line when the event has one.
     */
    public static void printError(PrintWriter out, String program, CmEvent e) {
        out.println(program + ": event: " + name(e.type()) + ", error: " + e.status());
        if (e.detail() != null) {
            out.println("rdma4j: " + e.detail());
        }
    }
}
