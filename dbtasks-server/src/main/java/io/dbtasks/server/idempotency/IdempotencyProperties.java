package io.dbtasks.server.idempotency;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code dbtasks.server.idempotency.*}: how long {@code Idempotency-Key} records are kept. */
@ConfigurationProperties("dbtasks.server.idempotency")
public class IdempotencyProperties {
    private Duration ttl = Duration.ofHours(24);

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
}
