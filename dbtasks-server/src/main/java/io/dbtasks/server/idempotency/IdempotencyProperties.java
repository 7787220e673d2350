package io.dbtasks.server.idempotency;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code dbtasks.server.idempotency.*}: how long {@code Idempotency-Key} records are kept, and how
 * long a request's record stays its own after the server that runs it stops renewing it.
 */
@ConfigurationProperties("dbtasks.server.idempotency")
public class IdempotencyProperties {
    /** The default lease of an in-flight record. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    private Duration ttl = Duration.ofHours(24);
    private Duration lease = DEFAULT_LEASE;

    /**
     * @return how long after its first use a key is remembered; a reuse after that is a new request.
     *     Default 24 hours
     */
    public Duration getTtl() {
        return ttl;
    }

    /** @param ttl how long after its first use a key is remembered */
    public void setTtl(Duration ttl) {
        this.ttl = ttl;
    }

    /**
     * @return how long an in-flight record stays its server's without a renewal (renewed every third
     *     of it while the request runs); once it has passed, a repeat of the request takes the record
     *     over and runs again. Default 30 seconds
     */
    public Duration getLease() {
        return lease;
    }

    /**
     * @param lease how long an in-flight record stays its server's without a renewal; positive
     * @throws IllegalArgumentException if {@code lease} is not positive
     */
    public void setLease(Duration lease) {
        if (lease == null || lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException(
                    "dbtasks.server.idempotency.lease must be positive, for example 30s; got " + lease);
        }
        this.lease = lease;
    }
}
