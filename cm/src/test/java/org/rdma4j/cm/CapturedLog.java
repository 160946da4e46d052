// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The records one java.util.logging category gets while open (System.Logger's default backend): the
 * category's level is lowered to {@code level} and put back on close.
 */
final class CapturedLog extends Handler implements AutoCloseable {
    final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Logger logger;
    private final Level before;

    CapturedLog(String category, Level level) {
        logger = Logger.getLogger(category);
        before = logger.getLevel();
        logger.setLevel(level);
        setLevel(Level.ALL);
        logger.addHandler(this);
    }

    /** {@return the messages at {@code level} that contain {@code text}} */
    List<String> at(Level level, String text) {
        return records.stream().filter(r -> r.getLevel() == level).map(LogRecord::getMessage)
                .filter(m -> m.contains(text)).toList();
    }

    /** {@return every message, one a line, with its level} */
    String messages() {
        StringBuilder sb = new StringBuilder();
        records.forEach(r -> sb.append('\n').append(r.getLevel()).append(": ").append(r.getMessage()));
        return sb.toString();
    }

    @Override
    public void publish(LogRecord r) {
        records.add(r);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(before);
    }
}
