package io.dbtasks.server.audit;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The audit log's settings, {@code dbtasks.server.audit.*}. */
@ConfigurationProperties("dbtasks.server.audit")
public class AuditProperties {
    /** How long entries are kept; older ones are deleted by the periodic purge. */
    private Duration retention = Duration.ofDays(90);

    /** How often the purge runs (also once shortly after start). */
    private Duration purgeInterval = Duration.ofHours(1);

    /** @return how long entries are kept */
    public Duration getRetention() {
        return retention;
    }

    /**
     * @param retention how long entries are kept, more than zero
     * @throws IllegalArgumentException if it is not positive
     */
    public void setRetention(Duration retention) {
        if (retention == null || retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException(
                    "dbtasks.server.audit.retention must be more than zero, such as 90d; got " + retention);
        }
        this.retention = retention;
    }

    /** @return how often the purge runs */
    public Duration getPurgeInterval() {
        return purgeInterval;
    }

    /**
     * @param purgeInterval how often the purge runs, at least one millisecond
     * @throws IllegalArgumentException if it is less than a millisecond
     */
    public void setPurgeInterval(Duration purgeInterval) {
        if (purgeInterval == null || purgeInterval.toMillis() < 1) {
            throw new IllegalArgumentException(
                    "dbtasks.server.audit.purge-interval must be at least 1ms, such as 1h; got " + purgeInterval);
        }
        this.purgeInterval = purgeInterval;
    }
}
