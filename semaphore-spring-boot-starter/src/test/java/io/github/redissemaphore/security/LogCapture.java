package io.github.redissemaphore.security;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

/**
 * Looks at every Logback event while open, with the given loggers turned up (and kept off the
 * console, which would drown in them): the text of each event (its formatted message and the
 * stack trace of its exception, causes and suppressed ones included) is searched for a secret.
 * Keeps the events that contain it, and the WARN and ERROR ones for the test to check that the
 * failure paths were really taken. Closing puts the loggers back as they were.
 */
final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {

    private final String secret;
    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    private final Map<Logger, Level> levels = new LinkedHashMap<>();
    private final Map<Logger, Boolean> additivity = new LinkedHashMap<>();
    private final List<String> leaks = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private final AtomicLong events = new AtomicLong();

    private LogCapture(String secret) {
        this.secret = secret;
    }

    /** Captures every event, with {@code loggers} at {@code level}. */
    static LogCapture start(String secret, Level level, String... loggers) {
        LogCapture capture = new LogCapture(secret);
        capture.setContext(capture.context);
        capture.setName("secret-search");
        capture.start();
        Logger root = capture.context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(capture);
        for (String name : loggers) {
            Logger logger = capture.context.getLogger(name);
            capture.levels.put(logger, logger.getLevel());
            capture.additivity.put(logger, logger.isAdditive());
            logger.setLevel(level);
            logger.setAdditive(false);
            logger.addAppender(capture);
        }
        return capture;
    }

    @Override
    protected void append(ILoggingEvent event) {
        events.incrementAndGet();
        String text = event.getFormattedMessage()
                + (event.getThrowableProxy() == null ? "" : "\n" + ThrowableProxyUtil.asString(event.getThrowableProxy()));
        String line = event.getLevel() + " " + event.getLoggerName() + " [" + event.getThreadName() + "] " + text;
        synchronized (this) {
            if (line.contains(secret)) {
                leaks.add(line);
            }
            if (event.getLevel().isGreaterOrEqual(Level.WARN) && warnings.size() < 5000) {
                warnings.add(line);
            }
        }
    }

    /** @return the events whose text contains the secret */
    synchronized List<String> leaks() {
        return List.copyOf(leaks);
    }

    /** @return the WARN and ERROR events (the first 5000) */
    synchronized List<String> warnings() {
        return List.copyOf(warnings);
    }

    /** @return how many events were looked at */
    long events() {
        return events.get();
    }

    @Override
    public void close() {
        levels.forEach(Logger::setLevel);
        additivity.forEach(Logger::setAdditive);
        levels.keySet().forEach(logger -> logger.detachAppender(this));
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(this);
        stop();
    }
}
