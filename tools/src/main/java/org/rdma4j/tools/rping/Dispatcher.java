// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.tools.cli.CmEvents;
import org.rdma4j.verbs.VerbsException;

/**
 * rping's cm_thread: reads the channel and hands each event to the queue of its id (a
 * CONNECT_REQUEST to its listener's). An event for an id nobody registered is acked and dropped.
 */
final class Dispatcher implements AutoCloseable {
    private final CmEventChannel channel;
    /** rping's -d lines. */
    private final Consumer<String> debug;
    private final Map<CmId, LinkedBlockingQueue<CmEvent>> queues = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;

    Dispatcher(CmEventChannel channel, Consumer<String> debug) {
        this.channel = channel;
        this.debug = debug;
        this.thread = Thread.ofPlatform().daemon().name("rping-cm").start(this::run);
    }

    LinkedBlockingQueue<CmEvent> register(CmId id) {
        return queues.computeIfAbsent(id, k -> new LinkedBlockingQueue<>());
    }

    private void run() {
        while (running) {
            CmEvent e;
            try {
                e = channel.getEvent(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ex) {
                return;
            } catch (VerbsException ex) {
                return; // the channel closed
            }
            if (e == null) {
                continue;
            }
            CmId owner = e.type() == CmEventType.CONNECT_REQUEST && e.listenId() != null ? e.listenId() : e.id();
            LinkedBlockingQueue<CmEvent> q = owner == null ? null : queues.get(owner);
            if (q != null) {
                q.add(e);
            } else {
                debug.accept("event " + CmEvents.name(e.type()) + " for an id nobody waits on");
                e.ack();
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(1000);
        for (LinkedBlockingQueue<CmEvent> q : queues.values()) {
            for (CmEvent e; (e = q.poll()) != null; ) {
                e.ack();
            }
        }
    }
}
