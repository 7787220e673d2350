package io.dbtasks.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Records what one logger writes while it is open, so a test can assert that the engine reported
 * something (a lost lease, say). Close it to detach.
 */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private LogCapture(Class<?> type) {
        this.logger = (Logger) LoggerFactory.getLogger(type);
        appender.start();
        logger.addAppender(appender);
    }

    /** Starts recording the logger of {@code type}. */
    public static LogCapture of(Class<?> type) {
        return new LogCapture(type);
    }

    /** Starts recording the logger named {@code name}, e.g. a package-private class's. */
    public static LogCapture of(String name) {
        try {
            return new LogCapture(Class.forName(name));
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException(name, e);
        }
    }

    /** @return the formatted messages so far, oldest first */
    public List<String> messages() {
        synchronized (appender) { // AppenderBase.doAppend holds this lock while adding
            return appender.list.stream()
                    .map(ILoggingEvent::getFormattedMessage)
                    .toList();
        }
    }

    /** @return whether some message so far contains every one of {@code parts} */
    public boolean contains(String... parts) {
        return messages().stream().anyMatch(m -> {
            for (String p : parts) {
                if (!m.contains(p)) {
                    return false;
                }
            }
            return true;
        });
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}
